"""streamlearn.datasets.open_stream and InputSpec: arguments of the wrong kind are one-line errors naming them."""

import pytest

from streamlearn.datasets import InputSpec, open_stream


@pytest.mark.parametrize(
    "spec, words",
    [
        ("libsvm", "got str 'libsvm'."),
        ({"format": "libsvm"}, "got dict {'format': 'libsvm'}; for a dict use InputSpec.from_dict(...)."),
        (None, "got NoneType None."),
    ],
)
def test_open_stream_spec_that_is_not_an_input_spec(tmp_path, spec, words):
    path = tmp_path / "d.svm"
    path.write_bytes(b"1 1:1\n")
    with pytest.raises(TypeError, match="^spec must be an InputSpec") as err:
        open_stream(path, spec)
    assert str(err.value).endswith(words) and "\n" not in str(err.value)
    X, y = next(open_stream(path, InputSpec(format="libsvm")))
    assert X.shape == (1, 1) and y.tolist() == [1.0]


@pytest.mark.parametrize("bits", ["x", [8], 0, 33])
def test_input_spec_bits_not_a_number_names_bits(bits):
    with pytest.raises(ValueError) as err:
        InputSpec(format="vw", bits=bits)
    assert str(err.value) == f"bits must be between 1 and 32; got {bits!r}."
