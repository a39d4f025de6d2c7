"""The ``streamlearn`` command line: argument parsing that calls the library; no algorithm code here."""
