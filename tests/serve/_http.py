"""The served app driven in-process (httpx over ASGI), shared by the serve tests."""

import asyncio

import httpx


def predictions_together_and_alone(app, bodies):
    """``(together, alone)``: the responses to POST /predict of each body, sent at once (the server may answer
    them in one group), then one after the other."""

    async def run():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            together = await asyncio.gather(*(c.post("/predict", content=b) for b in bodies))
            alone = [await c.post("/predict", content=b) for b in bodies]
            return together, alone

    return asyncio.run(run())
