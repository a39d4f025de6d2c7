"""CSV and Parquet readers: buckets (against a plain-Python twin and mmh3), streaming, spec, errors."""

import re
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from streamlearn._kernels.tabular import (
    hash_text_column,
    hashed_features_to_csr,
    hashed_rows_to_csr,
)
from streamlearn.datasets import (
    TabularFormatError,
    iter_csv,
    iter_parquet,
    write_click_log,
)
from tests.conftest import NonSeekable, decompressible
from tests.naive_hashing import hash_string
from tests.naive_tabular import naive_matrix

CSV_TEXT = (
    "clicked,age,country,premium,price,zip\n"
    "1,31,FR,true,1.5,75001\n"
    "0,,DE,false,0,10115\n"
    "1,45,,true,2.25,\n"
    "0,0,FR,,-3,75001\n"
)
ROWS = [  # the same rows as Python values (what the twin and DictHasher see)
    {"age": 31, "country": "FR", "premium": True, "price": 1.5, "zip": 75001},
    {"age": None, "country": "DE", "premium": False, "price": 0.0, "zip": 10115},
    {"age": 45, "country": None, "premium": True, "price": 2.25, "zip": None},
    {"age": 0, "country": "FR", "premium": None, "price": -3.0, "zip": 75001},
]
LABELS = [1.0, 0.0, 1.0, 0.0]


def _dense_equal(A, B):
    A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    assert A.shape == B.shape
    assert (A != B).nnz == 0, "matrices differ"


def _concat(reader):
    chunks = list(reader)
    return sp.vstack([c[0] for c in chunks], format="csr"), np.concatenate([c[1] for c in chunks])


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(CSV_TEXT)
    return path


@pytest.mark.parametrize("bits", [6, 18, 24])
def test_csv_buckets_equal_the_plain_python_twin(csv_file, bits):
    X, y = _concat(iter_csv(csv_file, label="clicked", bits=bits, chunk_size=3))
    assert y.tolist() == LABELS
    _dense_equal(X, naive_matrix(ROWS, bits))
    assert X.has_sorted_indices


def test_one_cell_against_mmh3(csv_file):
    mmh3 = pytest.importorskip("mmh3")
    X, _ = _concat(iter_csv(csv_file, label="clicked", bits=24))
    seed = mmh3.hash("country", 0, signed=False)
    j = mmh3.hash("country=FR", seed, signed=False) & ((1 << 24) - 1)
    assert X[0, j] == 1.0 and X[3, j] == 1.0 and X[1, j] == 0.0
    j_age = mmh3.hash("age", mmh3.hash("age", 0, signed=False), signed=False) & ((1 << 24) - 1)
    assert X[0, j_age] == 31.0 and X[2, j_age] == 45.0


def test_categorical_and_namespace_options(csv_file):
    ns = {"geo": ["country", "zip"]}
    X, _ = _concat(iter_csv(csv_file, label="clicked", bits=20, categorical=["zip"], namespaces=ns))
    _dense_equal(X, naive_matrix(ROWS, 20, namespaces=ns, categorical=("zip",)))
    # the options change the buckets (the twin without them disagrees)
    assert (naive_matrix(ROWS, 20) != X).nnz > 0


def test_a_categorical_number_is_hashed_as_the_file_writes_it(tmp_path):
    """``categorical`` hashes the text of a CSV cell as it stands (``007`` and ``7``, ``10`` and ``10.0`` are four
    categories) and a Parquet number as pyarrow writes it (``10`` for the float 10.0), as the guide says."""
    path = tmp_path / "c.csv"
    path.write_text("y,c\n1,007\n0,7\n1,10\n0,10.0\n")
    X, _ = _concat(iter_csv(path, label="y", bits=20, categorical=["c"]))
    _dense_equal(X, naive_matrix([{"c": v} for v in ("007", "7", "10", "10.0")], 20))
    pq.write_table(pa.table({"y": [1, 0], "c": [10.0, 1.5]}), tmp_path / "c.parquet")
    X, _ = _concat(iter_parquet(tmp_path / "c.parquet", label="y", bits=20, categorical=["c"]))
    _dense_equal(X, naive_matrix([{"c": "10"}, {"c": "1.5"}], 20))


def test_ignore_and_weight(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("id,y,w,x\n7,1,0.5,2\n8,0,2,3\n")
    reader = iter_csv(path, label="y", weight="w", ignore=["id"], bits=10)
    X, y, w = next(iter(reader))
    assert reader.columns == ["x"] and w.tolist() == [0.5, 2.0] and X.nnz == 2
    assert reader.spec.weight_column == "w" and reader.spec.ignore_columns == ["id"]


def test_parquet_equals_csv_on_the_click_log(tmp_path):
    csv, parquet = tmp_path / "c.csv", tmp_path / "c.parquet"
    write_click_log(csv, 3000, seed=1)
    write_click_log(parquet, 3000, seed=1)
    Xc, yc = _concat(iter_csv(csv, label="clicked", bits=18, chunk_size=700))
    Xp, yp = _concat(iter_parquet(parquet, label="clicked", bits=18, chunk_size=1000))
    assert Xc.shape == (3000, 1 << 18) and np.array_equal(yc, yp)
    _dense_equal(Xc, Xp)
    # dictionary-encoded Parquet columns (hashed once per dictionary entry) give the same buckets
    dic = tmp_path / "d.parquet"
    table = pq.read_table(parquet)
    table = table.set_column(
        table.schema.get_field_index("country"), "country", table.column("country").dictionary_encode()
    )
    pq.write_table(table, dic)
    assert pa.types.is_dictionary(pq.ParquetFile(dic).schema_arrow.field("country").type)
    Xd, _ = _concat(iter_parquet(dic, label="clicked", bits=18))
    _dense_equal(Xc, Xd)


def test_chunks_have_chunk_size_rows_and_gzip(tmp_path):
    path = tmp_path / "c.csv.gz"
    write_click_log(path, 2500, seed=2)
    sizes = [c[0].shape[0] for c in iter_csv(path, label="clicked", chunk_size=1000)]
    assert sizes == [1000, 1000, 500]


def test_spec_reads_columns_by_name_and_unseen_values(tmp_path, csv_file):
    train = iter_csv(csv_file, label="clicked", bits=16)
    other = tmp_path / "other.csv"  # columns reordered, no label, an extra column, an unseen country
    other.write_text("zip,extra,premium,country,price,age\n75001,zz,true,FR,1.5,31\n99999,q,false,XX,1,2\n")
    reader = iter_csv(other, spec=train.spec.to_dict(), label_required=False)
    X, y = next(iter(reader))
    assert y is None
    X_train, _ = _concat(train)
    _dense_equal(X[0], X_train[0])
    _dense_equal(X[1], naive_matrix([{"zip": 99999, "premium": False, "country": "XX", "price": 1.0, "age": 2}], 16))


def test_spec_keeps_training_kinds(tmp_path, csv_file):
    """A column that was text in training stays text even where a later file looks numeric."""
    train = iter_csv(csv_file, label="clicked", bits=16)
    assert train.spec.options["columns"]["country"] == "text"
    other = tmp_path / "o.csv"
    other.write_text("age,country,premium,price,zip\n1,42,true,1,5\n")
    X, _ = next(iter(iter_csv(other, spec=train.spec, label_required=False)))
    _dense_equal(X, naive_matrix([{"age": 1, "country": "42", "premium": True, "price": 1.0, "zip": 5}], 16))


@pytest.mark.parametrize("text", ["", "\n\n", "\r\n\r\n"])
def test_an_empty_csv_under_a_spec_has_no_rows(tmp_path, csv_file, text):
    """No header and no row (empty, or blank lines): read under a model's columns it is a file of no examples."""
    spec = iter_csv(csv_file, label="clicked").spec
    empty = tmp_path / "e.csv"
    empty.write_text(text)
    assert list(iter_csv(empty, spec=spec, label_required=False)) == []
    assert list(iter_csv(empty, spec=spec)) == []
    assert list(iter_csv(NonSeekable(empty.read_bytes()), spec=spec)) == []
    with pytest.raises(
        TabularFormatError, match=r"^.*e\.csv: no data lines: the file is empty or blank \(expected a header"
    ):
        iter_csv(empty, label="clicked")  # nothing to take the columns from


@pytest.mark.parametrize("end", ["\n", "\r\n", ""])
def test_a_header_alone_is_a_file_of_no_rows_with_or_without_a_line_end(tmp_path, end):
    """pyarrow finds no column in a header line without a line end ("Empty CSV file or block"): it is read as
    the same line ended, from a file and from a pipe; a header whose quote never closes is named as such."""
    path = tmp_path / "h.csv"
    path.write_bytes(b'y,age,"coun\ntry"' + end.encode())
    for source in (path, NonSeekable(path.read_bytes())):
        reader = iter_csv(source, label="y")
        assert reader.columns == ["age", "coun\ntry"] and list(reader) == []
    path.write_bytes(b'y,age,"country' + end.encode())
    with pytest.raises(
        TabularFormatError, match=r"h\.csv, line 1: the header line does not end: a quote in it is never"
    ):
        iter_csv(path, label="y")


def test_blank_lines_before_a_header_beyond_the_first_block_are_not_an_empty_file(tmp_path, csv_file):
    """pyarrow finds no column in a first block of blank lines; the rows after it must not be dropped silently."""
    spec = iter_csv(csv_file, label="clicked").spec
    late = tmp_path / "late.csv"
    late.write_text("\n" * (2 << 20) + "age,country,premium,price,zip\n1,FR,true,1,5\n")
    with pytest.raises(TabularFormatError, match="late.csv"):
        list(iter_csv(late, spec=spec, label_required=False))


# --- errors ----------------------------------------------------------------------------------------


def test_missing_label_column(csv_file):
    with pytest.raises(TabularFormatError, match=r"t\.csv, line 1: no label column 'click'"):
        iter_csv(csv_file, label="click")


@pytest.mark.parametrize("sep, decimal", [(";", True), ("|", False)])
def test_a_file_separated_by_another_character_is_named_as_such(tmp_path, sep, decimal):
    """A ';'-separated file read as one column: the message listed that column; it now says why, and which
    option reads the file (and, for ';', the one for decimal commas)."""
    path = tmp_path / "eu.csv"
    path.write_text(f"age{sep}price{sep}label\n3{sep}1.5{sep}1\n")
    with pytest.raises(TabularFormatError) as err:
        iter_csv(path, label="label")
    assert str(err.value) == (
        f"{path}, line 1: no label column 'label'; the file has one column, 'age{sep}price{sep}label': its fields "
        f"look separated by {sep!r}, and CSV files are read separated by ',' (.tsv files by tabs) unless told: "
        f"give delimiter='{sep}' (the command line's --delimiter '{sep}')"
        + (" (and decimal=',' / --decimal ',' if its numbers are written 3,5)" if decimal else "")
        + "."
    )
    if decimal:  # a decimal comma in the first rows: more fields than the header has
        path.write_text("age;price;label\n3;1,5;1\n")
        with pytest.raises(TabularFormatError) as err:
            iter_csv(path, label="label")
        assert str(err.value) == (
            f"{path}, line 2: expected 1 columns (as in the header), got 2; the header is one column, "
            "'age;price;label': its fields look separated by ';', and CSV files are read separated by ',' (.tsv "
            "files by tabs) unless told: give delimiter=';' (the command line's --delimiter ';') (and decimal=',' / "
            "--decimal ',' if its numbers are written 3,5)."
        )
        X, _ = _concat(iter_csv(path, label="label", delimiter=";", decimal=","))  # what the message says
        assert sorted(X.data.tolist()) == [1.5, 3.0]
    one = tmp_path / "one.csv"  # one column without another separator in its name: listed as before
    one.write_text("age\n3\n")
    with pytest.raises(TabularFormatError, match=r"no label column 'label'; the file has columns 'age'\.$"):
        iter_csv(one, label="label")


EU_ROWS = [("1", "3.5", "FR", "a;b|c"), ("0", "12.25", "DE", "x"), ("1", "-0.5", "IT", 'say "hi"')]


def _table_text(delimiter, decimal):
    """EU_ROWS as CSV text with ``delimiter`` and ``decimal`` (text values quoted, quotes doubled)."""

    def cell(v, k):
        if k == 1:
            return v.replace(".", decimal)
        if k == 3:
            return '"' + v.replace('"', '""') + '"'
        return v

    lines = ["label" + delimiter + delimiter.join(["price", "country", "note"])]
    lines += [delimiter.join(cell(v, k) for k, v in enumerate(row)) for row in EU_ROWS]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("delimiter, decimal", [(";", ","), ("|", None), ("\t", ","), (";", None)])
@pytest.mark.parametrize("how", ["file", "gzip", "pipe"])
def test_a_delimiter_and_decimal_mark_given_read_as_the_comma_file(tmp_path, delimiter, decimal, how):
    """Fields split at the delimiter given (quoted values holding it kept whole), numbers read with the decimal
    mark given: the chunks of the same rows written with commas and points, for a file, a compressed file and a
    pipe; both are recorded in the spec, and a file read through the spec is read the same way."""
    plain = tmp_path / "plain.csv"
    plain.write_text(_table_text(",", "."))
    X_ref, y_ref = _concat(iter_csv(plain, label="label"))
    data = _table_text(delimiter, decimal or ".").encode()
    path = tmp_path / ("t.csv.gz" if how == "gzip" else "t.csv")  # (a .csv name: the delimiter is not a tab's)
    path.write_bytes(_compressed("gzip", data) if how == "gzip" else data)
    source = NonSeekable(data, name="<stdin>") if how == "pipe" else path
    reader = iter_csv(source, label="label", delimiter=delimiter, decimal=decimal)
    X, y = _concat(reader)
    _dense_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)
    assert reader.spec.options["delimiter"] == delimiter and reader.spec.options.get("decimal") == decimal
    again = tmp_path / "again.csv"
    again.write_bytes(data)
    X2, y2 = _concat(iter_csv(again, spec=reader.spec.to_dict()))
    _dense_equal(X2, X_ref)
    assert "delimiter" not in iter_csv(plain, label="label").spec.options  # (by the file's name: not recorded)


def test_numbers_with_decimal_commas_in_a_file_not_split_by_commas_are_an_error_naming_the_column(tmp_path):
    """Read with the point, 3,5 is text: the column would be hashed as categories, silently."""
    path = tmp_path / "eu.tsv"
    path.write_text(_table_text("\t", ","))
    with pytest.raises(TabularFormatError) as err:
        iter_csv(path, label="label")
    assert str(err.value) == (
        f"{path}, column 'price': its values are numbers written with a decimal comma (3,5), which would be read "
        "as text and hashed as categories: give decimal=',' (the command line's --decimal ','), or name the "
        "column in categorical (--categorical) to hash its values as text."
    )
    assert iter_csv(path, label="label", categorical=["price"]).spec.options["columns"]["price"] == "text"
    assert iter_csv(path, label="label", decimal=",").spec.options["columns"]["price"] == "numeric"
    comma = tmp_path / "c.csv"  # a comma file: its quoted "3,5" is text as before
    comma.write_text('y,price\n1,"3,5"\n0,"4,5"\n')
    assert iter_csv(comma, label="y").spec.options["columns"]["price"] == "text"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"delimiter": ";;"}, "delimiter must be one character other than a quote or a line end"),
        ({"delimiter": ""}, "delimiter must be one character"),
        ({"delimiter": '"'}, "delimiter must be one character"),
        ({"delimiter": "\n"}, "delimiter must be one character"),
        ({"delimiter": 59}, "delimiter must be one character"),
        ({"decimal": "\r"}, "decimal must be one character"),
        ({"decimal": ","}, "decimal and delimiter must differ; both are ','"),
        ({"delimiter": ";", "decimal": ";"}, "decimal and delimiter must differ; both are ';'"),
    ],
)
def test_a_bad_delimiter_or_decimal_mark_is_a_one_line_error(csv_file, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        iter_csv(csv_file, label="clicked", **kwargs)


def test_a_parquet_file_has_no_delimiter(tmp_path):
    from streamlearn.datasets._tabular import TabularReader

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"y": [1, 0], "a": [1.0, 2.0]}), path)
    with pytest.raises(ValueError, match="delimiter applies to CSV text; a parquet file has none"):
        TabularReader(path, "parquet", label="y", delimiter=";")


def test_a_saved_spec_with_a_bad_delimiter_is_named(csv_file):
    from streamlearn.datasets._spec import spec_problem

    spec = iter_csv(csv_file, label="clicked", delimiter=",").spec.to_dict()
    assert spec_problem(spec) is None
    spec["options"]["delimiter"] = ";;"
    assert spec_problem(spec) == ("options.delimiter", "one character, not a quote or a line end", ";;")


def test_missing_feature_column_under_a_spec(tmp_path, csv_file):
    spec = iter_csv(csv_file, label="clicked").spec
    other = tmp_path / "o.csv"
    other.write_text("age,premium,price,zip\n1,true,1,5\n")
    with pytest.raises(TabularFormatError, match=r"o\.csv, line 1: no column 'country', a feature of the model"):
        iter_csv(other, spec=spec, label_required=False)


def test_ragged_row_names_its_line(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("y,a,b\n" + "1,2,x\n" * 5000 + "0,3\n" + "1,2,x\n" * 10)
    with pytest.raises(TabularFormatError) as err:  # in the first block: found when the reader opens the file
        list(iter_csv(path, label="y", chunk_size=100))
    assert str(err.value) == f"{path}, line 5002: expected 3 columns (as in the header), got 2."
    big = tmp_path / "big.csv"  # beyond the first block: found while streaming
    big.write_text("y,a,b\n" + "1,2,x\n" * 300_000 + "0,3\n")
    reader = iter_csv(big, label="y", chunk_size=100_000)
    with pytest.raises(TabularFormatError) as err:
        list(reader)
    assert str(err.value) == f"{big}, line 300002: expected 3 columns (as in the header), got 2."


def test_a_ragged_row_in_the_first_block_of_a_pipe_or_compressed_file_names_its_line(tmp_path):
    """An error in the block the header is read from is found again in that block (kept from the pipe): the
    line of a pipe (its record) and of a compressed file, as for a plain file."""
    import gzip

    text = b'y,a,b\n1,"2\n3",x\n0,3\n1,4,z\n'
    with pytest.raises(TabularFormatError) as err:
        iter_csv(NonSeekable(text, name="<stdin>"), label="y")
    assert str(err.value) == "<stdin>, line 3: expected 3 columns (as in the header), got 2."
    path = tmp_path / "r.csv.gz"
    path.write_bytes(gzip.compress(text))
    with pytest.raises(TabularFormatError) as err:
        iter_csv(path, label="y")
    assert str(err.value) == f"{path}, line 4: expected 3 columns (as in the header), got 2."


def test_a_row_longer_than_two_blocks_names_its_line_and_length(tmp_path, monkeypatch):
    """pyarrow refuses a row spanning three blocks with "straddling object straddles two block boundaries (try to
    increase block size?)", naming no line and an option the reader does not have: the error names the line
    where the row starts (after a blank line and a quoted newline, which pyarrow does not count) and its length."""
    import gzip

    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    text = "y,t\n" + "1,ab\n" * 3000 + '\n0,"q\nr"\n1,' + "x" * 20_000 + "\n0,s\n"
    path = tmp_path / "long.csv"
    path.write_text(text)
    (tmp_path / "long.csv.gz").write_bytes(gzip.compress(text.encode()))
    reason = "the row is 20,003 bytes long, longer than the blocks of 4,096 bytes the CSV reader reads"
    for source in (path, tmp_path / "long.csv.gz"):
        with pytest.raises(TabularFormatError) as err:
            list(iter_csv(source, label="y"))
        assert str(err.value).startswith(f"{source}, line 3005: {reason}"), str(err.value)
    with pytest.raises(TabularFormatError, match=r"^<stdin>: a row is longer than the blocks of 4,096 bytes"):
        list(iter_csv(NonSeekable(text.encode(), name="<stdin>"), label="y"))


@pytest.mark.parametrize("reader", [iter_csv, iter_parquet])
@pytest.mark.parametrize("path", [3, None, b"d.csv"])
def test_a_path_of_the_wrong_type_is_named(reader, path):
    # was os.fspath's 'expected str, bytes or os.PathLike object, not int' (bytes: pyarrow's 'Cannot convert bytes
    # to pyarrow.lib.NativeFile'), naming no argument
    with pytest.raises(TypeError) as err:
        reader(path, label="y")
    assert str(err.value) == f"path must be a str, os.PathLike or a binary file object; got {type(path).__name__}."


@pytest.mark.parametrize(
    "text, line, column",
    [
        ('y,a\n1,2\n0,"3\n1,4\n0,5\n1,6\n', 3, "a"),  # the last 3 rows were read as part of one value
        ('y,a,b\n1,2,x\n0,3,"x,4\n', 3, "b"),  # the delimiter swallowed
    ],
)
def test_a_quote_never_closed_is_an_error_not_the_rest_of_the_file_in_one_value(tmp_path, text, line, column):
    """A quoted value opened and never closed took every later line into itself: 5 rows read as 2, exit 0."""
    path = tmp_path / "open.csv"
    path.write_text(text)
    with pytest.raises(TabularFormatError) as err:
        _concat(iter_csv(path, label="y"))
    assert (err.value.line, err.value.column) == (line, column)
    assert err.value.reason == (
        "the quoted value that starts on this line is never closed: the rest of the file was read into it "
        '(a quote inside a quoted value is written twice, "").'
    )
    closed = tmp_path / "closed.csv"  # a quoted value over several lines, closed: read as one value
    closed.write_text('y,a\n1,2\n0,"3\n1,4"\n')
    assert _concat(iter_csv(closed, label="y"))[0].shape[0] == 2
    # the same from a pipe (plain and compressed) and from a compressed file read through one
    packed = tmp_path / "open.csv.xz"
    packed.write_bytes(_compressed("xz", text.encode()))
    for source in (NonSeekable(text.encode()), NonSeekable(_compressed("gzip", text.encode())), packed):
        with pytest.raises(TabularFormatError) as err:
            _concat(iter_csv(source, label="y"))
        assert (err.value.line, err.value.column) == (line, column)
        assert err.value.reason.startswith("the quoted value that starts on this line is never closed")
    assert _concat(iter_csv(NonSeekable(closed.read_bytes()), label="y"))[0].shape[0] == 2


def test_a_quote_inside_an_unquoted_value_is_a_character_of_it(tmp_path):
    """A quote in the middle of an unquoted value (12" pizza) is a character of the value, as pyarrow reads it:
    counted as the start of a quoted value, it made a file whose last row holds a quoted value over two lines
    "never closed", and the line of a later error wrong."""
    import pyarrow.csv as pacsv

    text = 'y,a,b\n1,"multi\nline",12" pizza\n0,x,5\n1,"two\nlines",z\n'
    path = tmp_path / "inch.csv"
    path.write_text(text)
    want = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(newlines_in_values=True)).to_pydict()
    assert want["b"] == ['12" pizza', "5", "z"]
    packed = tmp_path / "inch.csv.xz"
    packed.write_bytes(_compressed("xz", text.encode()))
    for source in (path, NonSeekable(text.encode()), NonSeekable(_compressed("gzip", text.encode())), packed):
        X, y = _concat(iter_csv(source, label="y"))
        assert X.shape[0] == 3 and y.tolist() == [1, 0, 1]
    later = tmp_path / "later.csv"  # an error after a literal quote names its line
    later.write_text('y,a\n1,12" pizza\n0,"two\nlines"\n1,x\n0,y,z\n')
    with pytest.raises(TabularFormatError) as err:
        _concat(iter_csv(later, label="y"))
    assert (err.value.line, err.value.reason) == (6, "expected 2 columns (as in the header), got 3.")


def test_quoted_fields_with_newlines_across_blocks(tmp_path, monkeypatch):
    """Quoted fields holding newlines, commas and quotes (RFC 4180, as Python's csv module writes them) are
    read whole wherever the block boundaries fall, from a file and from a pipe: the rows of the same table
    written as Parquet."""
    import csv

    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    rows = [[i % 2, 'two\nlines, a comma and ""quotes""' if i % 3 == 0 else f"w{i % 7}", i] for i in range(3000)]
    path = tmp_path / "multi.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([["y", "text", "a"], *rows])
    table = pa.table({"y": [r[0] for r in rows], "text": [r[1] for r in rows], "a": [r[2] for r in rows]})
    pq.write_table(table, tmp_path / "multi.parquet")
    X_ref, y_ref = _concat(iter_parquet(tmp_path / "multi.parquet", label="y", chunk_size=1000))
    X, y = _concat(iter_csv(path, label="y", chunk_size=1000))
    assert X.shape[0] == 3000
    _dense_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)

    X_pipe, y_pipe = _concat(iter_csv(NonSeekable(path.read_bytes()), label="y", chunk_size=1000))
    _dense_equal(X_pipe, X_ref)
    np.testing.assert_array_equal(y_pipe, y_ref)


def test_a_header_longer_than_a_block_is_read(tmp_path, monkeypatch):
    """A header line longer than pyarrow's block (100,000 columns and more at 1 MiB) was "Empty CSV file or
    block": the block is the header's length and 1 MiB more, for a file, a compressed file and a pipe."""
    import gzip

    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    names = [f"column_{i:05d}" for i in range(3000)]  # a 39 KB header
    cols = {n: [(i + r) % 5 if i % 2 else f"v{(i * r) % 3}" for r in range(40)] for i, n in enumerate(names)}
    table = pa.table({"y": [r % 2 for r in range(40)], **cols})
    pq.write_table(table, tmp_path / "wide.parquet")
    path = tmp_path / "wide.csv"
    table.to_pandas().to_csv(path, index=False)
    (tmp_path / "wide.csv.gz").write_bytes(gzip.compress(path.read_bytes()))
    X_ref, y_ref = _concat(iter_parquet(tmp_path / "wide.parquet", label="y", chunk_size=15))
    assert X_ref.shape[0] == 40 and X_ref.nnz > 40 * 2500
    for source in (path, tmp_path / "wide.csv.gz", NonSeekable(path.read_bytes())):
        reader = iter_csv(source, label="y", chunk_size=15)
        assert set(reader.spec.options["columns"].values()) == {"numeric", "text"}
        X, y = _concat(reader)
        _dense_equal(X, X_ref)
        np.testing.assert_array_equal(y, y_ref)


class _ShortReads(NonSeekable):
    """A pipe that hands out at most 1000 bytes a read, as a decompressor or a slow writer may."""

    def readinto(self, b):
        return super().readinto(memoryview(b)[:1000])


def test_rows_longer_than_a_pipes_reads(tmp_path, monkeypatch):
    """Each block pyarrow reads from a pipe is whole, whatever the sizes of the pipe's reads: a short read made
    a row straddle three blocks ("straddling object straddles two block boundaries"), as an xz-compressed CSV
    file or pipe of 150 KB rows did at the 1 MiB block."""
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    rng = np.random.default_rng(0)
    lines = ["y,a,t"] + [f"{i % 2},{i},{''.join(rng.choice(list('abcdefgh '), 1500))}" for i in range(300)]
    path = tmp_path / "long.csv"
    path.write_text("\n".join(lines) + "\n")
    X_ref, y_ref = _concat(iter_csv(path, label="y"))
    X, y = _concat(iter_csv(_ShortReads(path.read_bytes()), label="y"))
    _dense_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


@pytest.mark.parametrize(
    ("kind", "name", "why"),
    [("gzip", "t.csv.gz", "EOFError: "), ("zstd", "t.csv.zst", "OSError: Truncated compressed stream)")],
)
@pytest.mark.parametrize("keep", [0.05, 0.6])  # cut in the first block (the header's) or in a later one
def test_a_truncated_compressed_pipe_is_a_one_line_error(tmp_path, monkeypatch, keep, kind, name, why):
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 14)
    rng = np.random.default_rng(0)
    text = "y,a,b\n" + "".join(f"{i % 2},{rng.random():.6f},w{rng.integers(1000)}\n" for i in range(20000))
    data = _compressed(kind, text.encode())
    data = data[: int(len(data) * keep)]

    whole = decompressible(kind, data).count(b"\n")  # the lines before the damage
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(NonSeekable(data, name="<stdin>"), label="y", chunk_size=1000))
    assert str(err.value).startswith(f"<stdin>, line {whole + 1}: cannot decompress the {kind} data ({why}")
    assert "\n" not in str(err.value)
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y", chunk_size=1000))
    assert str(err.value).startswith(f"{path}, line {whole + 1}: cannot decompress the {kind} data ({why}")
    assert str(err.value).endswith("the file is corrupt or truncated") and "\n" not in str(err.value)


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_read_error_is_raised_without_waiting_for_the_reader_to_let_go(tmp_path, monkeypatch, kind):
    """The frames of the failed read, kept in the error's traceback, hold the source that pyarrow's reader must
    let go of: the reader waited for them up to its limit (5 s) before the error was raised, for a file and for
    a pipe."""
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_RELEASE_WAIT", 20.0)
    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 14)  # the error in a block read ahead, not in the first
    rng = np.random.default_rng(0)
    text = "y,a\n" + "".join(f"{i % 2},{rng.random():.6f}\n" for i in range(20000))
    data = _compressed(kind, text.encode())
    data = data[: int(len(data) * 0.6)]
    path = tmp_path / f"t.csv.{ {'gzip': 'gz', 'zstd': 'zst'}[kind] }"
    path.write_bytes(data)
    for source in (path, NonSeekable(data, name="<stdin>")):
        start = time.monotonic()
        with pytest.raises(TabularFormatError, match=f"cannot decompress the {kind} data"):
            list(iter_csv(source, label="y", chunk_size=1000))
        assert time.monotonic() - start < 10.0, f"{source}: the error waited for the reader's limit"


def _compressed(kind, data):
    import bz2
    import gzip
    import lzma

    def zstd(b):
        return pa.compress(b, codec="zstd", asbytes=True)  # (one frame, as the zstd tool writes)

    codecs = {"plain": lambda b: b, "gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress, "zstd": zstd}
    return codecs[kind](data)


@pytest.mark.parametrize("kind", ["gzip", "bz2", "xz", "zstd"])
def test_a_truncated_compressed_file_names_the_line_where_the_text_stops(tmp_path, kind):
    rng = np.random.default_rng(1)
    text = "y,a,b\n" + "".join(f"{i % 2},{rng.random():.6f},w{rng.integers(1000)}\n" for i in range(150000))
    data = _compressed(kind, text.encode())  # (bz2: three blocks of 900 kB)
    data = data[: len(data) // 2]
    path = tmp_path / f"t.csv.{ {'gzip': 'gz', 'zstd': 'zst'}.get(kind, kind) }"
    path.write_bytes(data)
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y", chunk_size=1000))
    msg = str(err.value)
    assert msg.startswith(f"{path}, line ") and f": cannot decompress the {kind} data (" in msg, msg
    # the line after the last whole one that decompresses (to within one read of 64 KiB)
    after = decompressible(kind, data).count(b"\n") + 1
    assert after > 50000
    assert after - 64 * 1024 // len("0,0.123456,w1\n") <= err.value.line <= after, (err.value.line, after)


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("xz", "t.csv.xz"),
        ("gzip", "t.csv"),
        ("bz2", "t.csv"),
        ("xz", "t.csv"),
        ("bz2", "t.csv.gz"),
        ("plain", "t.csv.gz"),
        ("zstd", "t.csv.zst"),
        ("zstd", "t.csv.zstd"),
        ("zstd", "t.csv"),
        ("zstd", "t.csv.gz"),
        ("plain", "t.csv.zst"),
    ],
)
def test_a_csv_file_is_decompressed_by_its_bytes_not_its_name(tmp_path, csv_file, kind, name):
    """pyarrow tells a CSV file's compression by its name only: an xz file, or one whose name says another
    compression, read as the CSV text it holds (two passes: the file is opened again)."""
    X_ref, y_ref = _concat(iter_csv(csv_file, label="clicked"))
    path = tmp_path / "other" / name
    path.parent.mkdir()
    path.write_bytes(_compressed(kind, csv_file.read_bytes()))
    reader = iter_csv(path, label="clicked", chunk_size=3)
    for _ in range(2):
        X, y = _concat(reader)
        _dense_equal(X, X_ref)
        np.testing.assert_array_equal(y, y_ref)


@pytest.mark.parametrize("kind", ["plain", "gzip", "zstd"])
@pytest.mark.parametrize("opened", ["file", "BytesIO", "BytesIO at an offset"])
def test_a_seekable_file_object_reads_as_its_path(tmp_path, csv_file, kind, opened):
    """A binary file object that can seek (an opened file, a BytesIO) reads as the file's path does, compressed
    or not, from where it stands, in as many passes as asked. It read as "Empty CSV file" (the header's read had
    left it at its end) and a compressed one as "no end of the header line"."""
    import io

    X_ref, y_ref = _concat(iter_csv(csv_file, label="clicked"))
    data = csv_file.read_bytes() if kind == "plain" else _compressed(kind, csv_file.read_bytes())
    path = tmp_path / "data.bin"  # (a name that says nothing of the format or the compression)
    offset = 7 if opened.endswith("offset") else 0
    path.write_bytes(b"x" * offset + data)
    with open(path, "rb") if opened == "file" else io.BytesIO(path.read_bytes()) as f:
        f.seek(offset)
        reader = iter_csv(f, label="clicked", chunk_size=3)
        for _ in range(2):
            X, y = _concat(reader)
            _dense_equal(X, X_ref)
            np.testing.assert_array_equal(y, y_ref)


def _many_rows(n=20_000):
    return ("y,a,b\n" + "".join(f"{i % 2},{i},{2 * i + 1}\n" for i in range(n))).encode()


@pytest.mark.parametrize("kind", ["plain", "gzip"])
def test_two_passes_at_once_over_a_compressed_file_read_it_whole_each(tmp_path, monkeypatch, kind):
    """Each pass over a file read as a pipe of its text (a compressed file) has its own pipe: a pass begun while
    another reads gives every row to both (the second closed the first's pipe: "I/O operation on closed file")."""
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)  # (many blocks: the first pass is far from its end)
    path = tmp_path / "t.csv"
    path.write_bytes(_compressed(kind, _many_rows()))
    X_ref, y_ref = _concat(iter_csv(path, label="y", chunk_size=1000))
    reader = iter_csv(path, label="y", chunk_size=1000)
    first = iter(reader)
    head = next(first)
    X2, y2 = _concat(reader)
    rest = [head, *first]
    _dense_equal(X2, X_ref)
    _dense_equal(sp.vstack([c[0] for c in rest]), X_ref)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in rest]), y_ref)
    np.testing.assert_array_equal(y2, y_ref)


def test_a_file_object_is_read_by_one_pass_at_a_time(tmp_path, monkeypatch):
    """Two passes over one file object would both move its position: the second is refused in one line while
    the first is open, and runs once the first is dropped."""
    import io

    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    data = _many_rows()
    X_ref, _ = _concat(iter_csv(io.BytesIO(data), label="y", chunk_size=1000))
    reader = iter_csv(io.BytesIO(data), label="y", chunk_size=1000)
    first = iter(reader)
    next(first)
    with pytest.raises(ValueError) as err:
        list(reader)
    assert str(err.value) == (
        "<BytesIO object>: a file object is read by one pass at a time (both would move its position); finish or "
        "drop the pass over it first, or give the file's path."
    )
    del first
    _dense_equal(_concat(reader)[0], X_ref)


def test_a_tab_separated_file_object_is_told_by_its_header(csv_file):
    import io

    X_ref, y_ref = _concat(iter_csv(csv_file, label="clicked"))
    X, y = _concat(iter_csv(io.BytesIO(csv_file.read_bytes().replace(b",", b"\t")), label="clicked"))
    _dense_equal(X, X_ref)
    np.testing.assert_array_equal(y, y_ref)


@pytest.mark.parametrize("reader", ["csv", "parquet", "vw", "svmlight"])
def test_a_text_mode_file_object_is_refused_in_one_line(csv_file, reader):
    """The readers parse bytes: a file opened in text mode is named, with what to do (the CSV reader failed with
    "can't concat str to bytes"; VW's message named iter_svmlight)."""
    from streamlearn.datasets import iter_svmlight, iter_vw

    make = {
        "csv": lambda f: iter_csv(f, label="clicked"),
        "parquet": lambda f: iter_parquet(f, label="clicked"),
        "vw": lambda f: list(iter_vw(f)),
        "svmlight": lambda f: list(iter_svmlight(f)),
    }[reader]
    with open(csv_file) as f, pytest.raises(TypeError) as err:
        make(f)
    assert str(err.value) == (
        f"a data file object must be opened in binary mode ('rb'); got the text file object {csv_file} (mode 'r')."
    )


def test_a_pipe_opened_on_a_descriptor_is_named_by_it():
    from streamlearn.datasets._pipes import file_object_name

    r, w = __import__("os").pipe()
    with open(r, "rb") as f, open(w, "wb"):
        assert file_object_name(f) == f"<file descriptor {r}>"


@pytest.mark.parametrize("kind", ["plain", "gz", "pipe", "zst", "zst pipe"])
def test_a_quoted_crlf_across_a_block_boundary_keeps_its_newline(tmp_path, monkeypatch, kind):
    """pyarrow drops the '\\n' of a '\\r\\n' inside a quoted value when its block ends between the two bytes (a
    multi-line cell of a Windows export): the file, compressed file (a .zst one was decompressed by pyarrow, and
    refused, "the quoted value ... is never closed") or pipe reads every value whole, as one block does, wherever
    the boundaries fall."""
    import gzip

    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 64)
    for pad in range(64):  # the '\r' at each place of a block
        text = b"y,t\r\n1," + b"x" * pad + b'\r\n0,"ab\r\ncd"\r\n' + b"1,z\r\n" * 40
        data = gzip.compress(text) if kind == "gz" else _compressed("zstd", text) if "zst" in kind else text
        path = tmp_path / f"c{pad}.csv{'.zst' if 'zst' in kind else ''}"
        path.write_bytes(data)
        source = NonSeekable(data) if "pipe" in kind else path
        X, y = _concat(iter_csv(source, label="y", bits=12))
        X_ref = naive_matrix([{"t": "x" * pad or None}, {"t": "ab\r\ncd"}] + [{"t": "z"}] * 40, 12)
        _dense_equal(X, X_ref)
        assert y.tolist() == [1, 0] + [1] * 40


def test_a_text_column_empty_for_a_whole_block(tmp_path, monkeypatch):
    """A text column whose values are all missing in a record batch (a sparse 'coupon' column) gives no
    feature in those rows; it was an IndexError on the batch's empty dictionary."""
    from streamlearn.datasets import _tabular
    from streamlearn.preprocessing import DictHasher

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    path = tmp_path / "t.csv"
    rows = [{"a": i + 1, "coupon": f"C{i % 5}" if i < 100 or i >= 2900 else None} for i in range(3000)]
    path.write_text("y,a,coupon\n" + "".join(f"{i % 2},{r['a']},{r['coupon'] or ''}\n" for i, r in enumerate(rows)))
    X, y = _concat(iter_csv(path, label="y", bits=16, chunk_size=500))
    _dense_equal(X, DictHasher(bits=16).transform(rows))
    # and a column with no value at all (pyarrow's null type)
    path.write_text("y,a,empty\n" + "".join(f"{i % 2},{i + 1},\n" for i in range(3000)))
    X, y = _concat(iter_csv(path, label="y", bits=16, chunk_size=500))
    _dense_equal(X, DictHasher(bits=16).transform([{"a": i + 1} for i in range(3000)]))


def test_a_column_empty_in_the_first_block_is_numeric(tmp_path, monkeypatch):
    """A column without a value in the first block (pyarrow's null type) was text: its later numbers became
    categories ('a=2.5', value 1), silently. It is numeric, as pandas reads a column of empty cells; a later text
    is then an error naming the option that reads the column as text."""
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    path = tmp_path / "late.csv"
    path.write_text("y,a,b\n" + "1,,x\n" * 2000 + "0,2.5,y\n1,3,\n")
    for source in (path, NonSeekable(path.read_bytes())):
        reader = iter_csv(source, label="y", bits=16)
        assert reader.spec.options["columns"] == {"a": "numeric", "b": "text"}
        X, _ = _concat(reader)
        _dense_equal(X[-2:], naive_matrix([{"a": 2.5, "b": "y"}, {"a": 3}], 16))
    path.write_text("y,a,b\n" + "1,,x\n" * 2000 + "0,abc,y\n")
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y"))
    assert str(err.value) == (
        f"{path}, line 2002, column 'a': expected a number (the column has no value in the file's first block, about "
        "1 MB, and is read as numbers; --categorical a (categorical= in Python) reads it as text); got 'abc'."
    )
    assert iter_csv(path, label="y", categorical=["a"]).spec.options["columns"]["a"] == "text"


def test_a_column_without_a_name_is_hashed_as_dict_rows_hash_it(tmp_path):
    """A header with an empty name (a spreadsheet's trailing comma): the column is in VW's default namespace
    (' '), as DictHasher puts the key '' of dict rows; it was an IndexError."""
    from streamlearn.preprocessing import DictHasher

    path = tmp_path / "t.csv"
    path.write_text("y,a,\n1,2,x\n0,3,\n1,4,z\n")
    X, y = _concat(iter_csv(path, label="y", bits=12))
    rows = [{"a": 2, "": "x"}, {"a": 3}, {"a": 4, "": "z"}]
    _dense_equal(X, DictHasher(bits=12).transform(rows))
    assert y.tolist() == [1.0, 0.0, 1.0]
    X_keep, _ = _concat(iter_csv(path, label="y", bits=12, keep_namespaces=[" "]))
    assert X_keep.nnz == 2


def test_error_lines_count_the_newlines_inside_quoted_fields(tmp_path):
    """'line N' is the line of the file a text editor shows, also after quoted fields that hold newlines."""
    head = 'y,text,a\n1,"two\nlines",2\n0,"three\r\nlines\r\n",3\n'  # records 2 and 3 are lines 2-3 and 4-6
    path = tmp_path / "q.csv"
    path.write_text(head + "1,x\n", newline="")
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y"))
    assert str(err.value) == f"{path}, line 7: expected 3 columns (as in the header), got 2."
    path.write_text(head + ",x,4\n", newline="")
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y"))
    assert str(err.value) == f"{path}, line 7, column 'y': the label is missing."
    path.write_text("\n" + head.replace("\n1,", "\n\n\r\n1,") + "\n1,x\n", newline="")  # blank lines: skipped
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y"))
    assert str(err.value) == f"{path}, line 11: expected 3 columns (as in the header), got 2."
    (tmp_path / "ok.csv").write_text(head, newline="")
    spec = iter_csv(tmp_path / "ok.csv", label="y").spec
    path.write_text(head + "1,x,abc\n", newline="")
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, spec=spec))
    assert str(err.value).startswith(f"{path}, line 7, column 'a': expected a number")


def test_mixed_types_name_line_and_column(tmp_path, monkeypatch):
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)  # column kinds come from the first block
    path = tmp_path / "m.csv"
    path.write_text("y,a,b\n" + "1,2,x\n" * 6000 + "0,oops,x\n")
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y"))
    assert str(err.value).startswith(f"{path}, line 6002, column 'a': expected a number")
    assert "'oops'" in str(err.value)
    # under a model's spec a numeric column stays numeric whatever the file's first rows hold
    spec = iter_csv(path, label="y").spec
    other = tmp_path / "o.csv"
    other.write_text("a,b\n1,x\nNaN,y\nabc,z\n")
    with pytest.raises(TabularFormatError, match=r"o\.csv, line 4, column 'a': expected a number .*got 'abc'"):
        list(iter_csv(other, spec=spec, label_required=False))


def test_a_label_read_as_integers_in_the_first_block_takes_later_decimals(tmp_path, monkeypatch):
    """A label column of integers in the first block (ratings, counts) was read as int64 throughout: a later 4.5
    (or an integer beyond int64) was 'expected int64 ...; got '4.5''. Labels are float64, as pandas reads them."""
    from streamlearn.datasets import _tabular

    monkeypatch.setattr(_tabular, "_CSV_BLOCK", 1 << 12)
    path = tmp_path / "r.csv"
    path.write_text("y,a\n" + "3,2\n" * 2000 + "4.5,3\n99999999999999999999,1\n")
    for source in (path, NonSeekable(path.read_bytes())):
        _, y = _concat(iter_csv(source, label="y"))
        assert y.dtype == np.float64 and y[-3:].tolist() == [3.0, 4.5, 1e20]


def test_missing_label_value_and_bad_weight(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("y,w,a\n1,1,2\n,1,3\n")
    with pytest.raises(TabularFormatError, match=r"l\.csv, line 3, column 'y': the label is missing"):
        list(iter_csv(path, label="y"))
    path.write_text("y,w,a\n1,1,2\n0,-1,3\n")
    with pytest.raises(TabularFormatError, match=r"line 3, column 'w': weight -1.0 is not a finite number >= 0"):
        list(iter_csv(path, label="y", weight="w"))


def test_rows_without_a_label_or_weight_are_read_for_prediction(tmp_path):
    """Under ``label_required=False`` (prediction) a label or weight cell left empty is no error: the label is
    NaN ('' for text labels), the weight 1; training still refuses it."""
    train = tmp_path / "t.csv"
    train.write_text("y,w,a,c\n1,2,3,x\n0,1,4,y\n")
    spec = iter_csv(train, label="y", weight="w").spec
    other = tmp_path / "o.csv"
    other.write_text("y,w,a,c\n1,2,3,x\n,,4,y\n")
    X, y, w = next(iter(iter_csv(other, spec=spec, label_required=False)))
    assert X.shape[0] == 2 and np.array_equal(y, [1.0, np.nan], equal_nan=True) and w.tolist() == [2.0, 1.0]
    assert (next(iter(iter_csv(train, spec=spec)))[0] != X).nnz == 0
    other.write_text("y,w,a,c\n,,3,x\n,,4,y\n")  # columns left empty
    X, y, w = next(iter(iter_csv(other, spec=spec, label_required=False)))
    assert np.isnan(y).all() and w.tolist() == [1.0, 1.0]
    with pytest.raises(TabularFormatError, match=r"o\.csv, line 2, column 'y': the label is missing"):
        list(iter_csv(other, spec=spec))
    text = tmp_path / "text.parquet"
    pq.write_table(pa.table({"y": ["yes", None], "b": [True, None], "a": [1.0, 2.0]}), text)
    spec = iter_parquet(text, label="b").spec  # a boolean label
    y = next(iter(iter_parquet(text, spec=spec, label_required=False)))[1]
    assert np.array_equal(y, [1.0, np.nan], equal_nan=True)
    pq.write_table(pa.table({"y": ["yes", "no"], "a": [1.0, 2.0]}), tmp_path / "full.parquet")
    spec = iter_parquet(tmp_path / "full.parquet", label="y").spec
    assert next(iter(iter_parquet(text, spec=spec, label_required=False)))[1].tolist() == ["yes", ""]


def test_a_table_of_many_columns_is_read(tmp_path):
    """A CSV of 10,000 columns, read, then read again under the spec it produced (the model's columns looked up
    by name): the same rows. (Names are looked up in sets, linear in the columns; with lists, two reads of 40,000
    columns took about a minute. Tests assert results, not times.)"""
    n = 10_000
    path = tmp_path / "wide.csv"
    path.write_text("y," + ",".join(f"c{i}" for i in range(n)) + "\n1," + ",".join("1" for _ in range(n)) + "\n")
    reader = iter_csv(path, label="y", bits=20)
    (X, y), *rest = list(reader)
    later = list(iter_csv(path, spec=reader.spec))  # under a spec: the model's columns are looked up too
    assert not rest and y.tolist() == [1.0] and X.nnz > 0.9 * n and (later[0][0] != X).nnz == 0


def test_text_that_is_not_utf8_names_the_file_line_and_column(tmp_path):
    """A Latin-1 header was a bare UnicodeDecodeError (no file, no line); a Latin-1 value was pyarrow's message
    with the column's number."""
    path = tmp_path / "latin.csv"
    path.write_bytes(b"y,v\xe9lo,a\n1,x,2\n")
    with pytest.raises(TabularFormatError) as err:
        iter_csv(path, label="y")
    assert str(err.value) == (
        f"{path}, line 1: the column name 'v\ufffdlo' is not UTF-8 text; expected UTF-8 (a file in another "
        "encoding can be converted, e.g. with iconv -f latin1 -t utf-8)."
    )
    path.write_bytes(b'y,city,a\n1,Munich,2\n0,"Pa\nris",3\n1,K\xf6ln,4\n')
    with pytest.raises(TabularFormatError) as err:
        list(iter_csv(path, label="y"))
    assert str(err.value).startswith(f"{path}, line 5, column 'city': expected UTF-8 text; the value holds other bytes")


def test_zstd_files_are_read_and_zip_archives_named_as_such(tmp_path):
    """A zstd CSV file is read whatever its name (it was "the file is zstd-compressed" unless named .zst); a zip
    archive is an error saying so (it was "Empty CSV file or block" or "expected 2 columns (as in the header),
    got 1")."""
    import zipfile

    table = b"y,a\n1,2\n0,3\n"
    zstd = pa.compress(table, codec="zstd", asbytes=True)
    for name in ("z.csv", "z.csv.zst"):
        (tmp_path / name).write_bytes(zstd)
        assert next(iter(iter_csv(tmp_path / name, label="y")))[1].tolist() == [1.0, 0.0]
    with zipfile.ZipFile(tmp_path / "t.zip", "w") as z:
        z.writestr("t.csv", table)
    with pytest.raises(TabularFormatError, match=r"t\.zip, line 1: the file is a zip archive; .* with unzip$"):
        iter_csv(tmp_path / "t.zip", label="y")


def test_a_parquet_file_read_as_text_is_named_parquet(tmp_path):
    """A Parquet file named .csv (or .vw, or read as LIBSVM) is an error saying it is Parquet; it was a column
    count or a malformed line about its binary bytes."""
    from streamlearn.datasets import iter_svmlight, load_vw

    path = tmp_path / "p.csv"
    pq.write_table(pa.table({"y": [1, 0], "x": [1.0, 2.0]}), path)
    said = "the file is Parquet (its first bytes say so), not text: read it as Parquet"
    with pytest.raises(TabularFormatError, match=rf"p\.csv, line 1: {re.escape(said)}$"):
        iter_csv(path, label="y")
    with pytest.raises(ValueError, match=rf"p\.csv:1: {re.escape(said)}$"):
        load_vw(path)
    with pytest.raises(ValueError, match=rf"p\.csv, line 1: {re.escape(said)}$"):
        list(iter_svmlight(path))
    assert next(iter(iter_parquet(path, label="y")))[1].tolist() == [1.0, 0.0]


def test_parquet_type_mismatch_under_a_spec(tmp_path):
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table({"y": [1, 0], "x": [1.0, 2.0]}), a)
    pq.write_table(pa.table({"x": ["p", "q"]}), b)
    spec = iter_parquet(a, label="y").spec
    with pytest.raises(TabularFormatError, match=r"column 'x': expected a numeric column"):
        list(iter_parquet(b, spec=spec, label_required=False))


def test_import_without_pyarrow_is_fine_and_reading_says_how_to_install(tmp_path, csv_file):
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import streamlearn, streamlearn.datasets, streamlearn.preprocessing\n"
        "from streamlearn.datasets import iter_csv\n"
        f"try:\n    iter_csv({str(csv_file)!r}, label='clicked')\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().startswith("reading CSV and Parquet needs pyarrow") and "streamlearn[arrow]" in out
    assert len(out.strip().splitlines()) == 1


# --- kernels against their plain twins ------------------------------------------------------------


def test_hash_text_column_equals_the_twin():
    rng = np.random.default_rng(0)
    words = ["", "a", "FR", "abc", "1234", " x", "ünïcode", "long-value-" * 5]
    arr = pa.array([words[i] if i >= 0 else None for i in rng.integers(-1, len(words), 200)])
    offsets = np.frombuffer(arr.buffers()[1], np.int32)
    data = np.frombuffer(arr.buffers()[2], np.uint8)
    valid = np.array([v is not None for v in arr.to_pylist()])
    prefix = np.frombuffer(b"col=", np.uint8)
    h = np.zeros(200, np.uint64)
    v = np.full(200, 7.0)
    hash_text_column(
        offsets=offsets, data=data, valid=valid, prefix=prefix, seed=np.uint64(12345), out_hash=h, out_value=v
    )
    for i, s in enumerate(arr.to_pylist()):
        if s is None:
            assert v[i] == 0.0
        else:
            assert v[i] == 1.0 and int(h[i]) == hash_string(b"col=" + s.encode(), 12345)


def test_csr_builders_equal_a_dict_twin():
    rng = np.random.default_rng(1)
    n_cols, n_rows, mask = 5, 50, 7  # a small mask: many collisions
    hashes = rng.integers(0, 2**40, (n_cols, n_rows)).astype(np.uint64)
    values = rng.choice([0.0, np.nan, 1.0, -2.5, 3.0], (n_cols, n_rows))
    expected = np.zeros((n_rows, mask + 1))
    for c in range(n_cols):
        for i in range(n_rows):
            if values[c, i] == values[c, i] and values[c, i] != 0:
                expected[i, int(hashes[c, i]) & mask] += values[c, i]
    indptr = np.empty(n_rows + 1, np.int64)
    indices = np.empty(n_cols * n_rows, np.int64)
    data = np.empty(n_cols * n_rows)
    no_terms = {"terms": np.zeros((0, 3), np.int64), "term_lens": np.zeros(0, np.int64), "has_wildcard": False}
    out = {"mask": np.uint64(mask), "indptr": indptr, "indices": indices, "data": data}
    col_ns = rng.choice([97, 98], n_cols).astype(np.int64)
    nnz = hashed_rows_to_csr(hashes=hashes, values=values, col_ns=col_ns, **no_terms, **out)
    X = sp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=(n_rows, mask + 1))
    assert X.has_sorted_indices and np.allclose(X.toarray(), expected)
    # the same features listed row after row, in shuffled order inside each row
    keep = (values == values) & (values != 0)
    rows = np.broadcast_to(np.arange(n_rows), (n_cols, n_rows))[keep]
    order = np.lexsort((rng.random(rows.shape[0]), rows))
    ns = np.zeros(rows.shape[0], np.int64)
    nnz = hashed_features_to_csr(
        rows=rows[order].astype(np.int64),
        hashes=hashes[keep][order],
        values=values[keep][order],
        ns=ns,
        n_rows=n_rows,
        **no_terms,
        **out,
    )
    X = sp.csr_matrix((data[:nnz], indices[:nnz], indptr), shape=(n_rows, mask + 1))
    assert X.has_sorted_indices and np.allclose(X.toarray(), expected)


# --- namespaces and interactions: the VW reader's buckets --------------------------------------------


@pytest.mark.parametrize("bits", [18, 24])
@pytest.mark.parametrize("quadratic, cubic", [((), ()), (("ua",), ()), (("ua", "uu"), ("uaa",)), ((":a",), ())])
def test_table_with_namespaces_equals_vw_text_of_the_same_rows(tmp_path, bits, quadratic, cubic):
    """The click log as CSV with the VW writer's namespaces gives the buckets of its VW text, -q and
    --cubic included (self-interactions and ':' too)."""
    from streamlearn.datasets import iter_vw
    from streamlearn.datasets._clicklog import CLICK_LOG_NAMESPACES

    csv, vw = tmp_path / "c.csv", tmp_path / "c.vw"
    write_click_log(csv, 400, seed=4)
    write_click_log(vw, 400, seed=4, label="01")
    ns = {k: list(v) for k, v in CLICK_LOG_NAMESPACES.items()}
    X_csv, y_csv = _concat(
        iter_csv(csv, label="clicked", bits=bits, namespaces=ns, quadratic=quadratic, cubic=cubic, chunk_size=150)
    )
    chunks = list(iter_vw(vw, bits=bits, label_convention="01", quadratic=quadratic, cubic=cubic))
    X_vw = sp.vstack([c[0] for c in chunks], format="csr")
    assert np.array_equal(y_csv, np.concatenate([c[1] for c in chunks]))
    assert X_csv.nnz >= 400 * (10 if not quadratic else 30)
    _dense_equal(X_csv, X_vw)
    assert np.array_equal(X_csv.indices, X_vw.indices) and np.array_equal(X_csv.indptr, X_vw.indptr)


def test_ignore_and_keep_namespaces(csv_file):
    keep = iter_csv(csv_file, label="clicked", bits=16, keep_namespaces=["a", "c"])  # age, country
    X, _ = _concat(keep)
    _dense_equal(X, naive_matrix([{k: r[k] for k in ("age", "country")} for r in ROWS], 16))
    X, _ = _concat(iter_csv(csv_file, label="clicked", bits=16, ignore_namespaces=["p"]))  # premium, price
    _dense_equal(X, naive_matrix([{k: v for k, v in r.items() if k[0] != "p"} for r in ROWS], 16))
    assert keep.spec.keep == ["a", "c"] and keep.spec.interactions == []


def test_parquet_errors_count_rows(tmp_path):
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"y": [1.0, 0.0, None, 1.0], "x": [1.0, 2.0, 3.0, float("inf")]}), path)
    with pytest.raises(TabularFormatError, match=r"p\.parquet, row 3, column 'y': the label is missing"):
        list(iter_parquet(path, label="y", chunk_size=2))
    pq.write_table(pa.table({"y": [1.0, 0.0, 1.0, 1.0], "x": [1.0, 2.0, 3.0, float("inf")]}), path)
    with pytest.raises(TabularFormatError, match=r"p\.parquet, row 4, column 'x': value inf is not finite"):
        list(iter_parquet(path, label="y"))


def test_parquet_integers_beyond_2_53_read_as_in_a_csv_file(tmp_path):
    # an int64 column of large values (ids, nanosecond times) is read rounded to the nearest float, as the same
    # text of a CSV file is (the checked cast refused it: "Integer value ... not in range")
    big = 2**60 + 1
    path, csv = tmp_path / "p.parquet", tmp_path / "p.csv"
    pq.write_table(pa.table({"y": [1.0, 0.0], "x": pa.array([big, 3], pa.int64())}), path)
    csv.write_text(f"y,x\n1,{big}\n0,3\n")
    Xp, _ = _concat(iter_parquet(path, label="y", bits=10))
    Xc, _ = _concat(iter_csv(csv, label="y", bits=10))
    _dense_equal(Xp, Xc)
    assert sorted(Xp.data) == [3.0, float(big)]


OVERFLOW = r"hashed column \d+ is inf: the product of crossed features \(quadratic/cubic\) or the sum of the values "


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("chunk_size", [2, 100])
def test_crossed_features_that_overflow_name_the_line_or_row(tmp_path, fmt, chunk_size):
    """1e200 * 1e200 (or 1e110 cubed, or a sum in one bucket) is beyond the float range: the reader names the
    line (CSV, the header is line 1) or row (Parquet) it comes from, instead of handing an inf over in X."""
    import pyarrow.csv as pacsv

    path = tmp_path / f"x.{fmt}"
    reader, where = (iter_csv, f"{path}, line 4: ") if fmt == "csv" else (iter_parquet, f"{path}, row 3: ")
    ns = {"a": ["a"], "b": ["b"], "c": ["c"]}

    def error(a, b, c, **kw):
        table = pa.table(
            {"y": [1.0, 0.0, 1.0, None], "a": [2.0, 3.0, a, 4.0], "b": [5.0, 6.0, b, 7.0], "c": [1, 1, c, 1]}
        )
        (pacsv.write_csv if fmt == "csv" else pq.write_table)(table, path)
        with pytest.raises(TabularFormatError) as err:
            list(reader(path, label="y", namespaces=ns, chunk_size=chunk_size, **kw))
        assert "\n" not in str(err.value) and err.value.column is None
        return str(err.value)

    # the overflow of the third row comes before the missing label of the fourth
    text = error(1e200, 1e200, 1.0, quadratic=["ab"])
    assert re.match(re.escape(where) + OVERFLOW, text)
    assert text.endswith("overflows; expected feature values small enough to multiply and add (scale them down).")
    assert re.match(re.escape(where) + OVERFLOW, error(1e110, 1e110, 1e110, cubic=["abc"]))
    assert re.match(re.escape(where) + OVERFLOW, error(1e308, 1e308, 1e308, bits=1))  # three values, two buckets


def test_chunk_size_and_bits_refuse_a_bool(tmp_path):
    """True is an int to Python but neither a chunk size nor a number of bits."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "c.csv"
    path.write_text("y,a\n1,2\n")
    with pytest.raises(ValueError, match=r"^chunk_size must be a positive integer; got True"):
        iter_csv(path, label="y", chunk_size=True)
    with pytest.raises(ValueError, match=r"^bits must be an integer between 1 and 32; got True"):
        iter_csv(path, label="y", bits=True)


def test_tab_separated_files_and_pipes_read_as_their_csv(tmp_path, csv_file):
    """A .tsv file (plain or compressed) is split at tabs by its name, a pipe by its header line (tabs and no
    comma): the same matrix as the comma-separated file."""
    X_ref, y_ref = _concat(iter_csv(csv_file, label="clicked"))
    tsv = CSV_TEXT.replace(",", "\t").encode()
    sources = [NonSeekable(tsv), NonSeekable(_compressed("gzip", tsv))]
    for name, kind in (("t.tsv", "plain"), ("t.tsv.gz", "gzip"), ("t.tsv.xz", "xz")):
        path = tmp_path / name
        path.write_bytes(_compressed(kind, tsv))
        sources.append(path)
    for source in sources:
        X, y = _concat(iter_csv(source, label="clicked"))
        _dense_equal(X, X_ref)
        np.testing.assert_array_equal(y, y_ref)


def test_a_damaged_zstd_file_or_pipe_stops_at_the_damage(tmp_path):
    """A damaged zstd CSV is an error naming the line where its text stops, from a path and from a pipe alike.
    Read again after the error (the damage is in the first block of 1 MiB, read ahead for the header and the
    column types), pyarrow's codec went on past the damage and text from elsewhere in the file followed: a bare
    pyarrow error ("Expected 3 columns, got 5"), or "Unknown frame descriptor" further on. Several frames (as
    written by pzstd or by concatenating files) read as their texts one after the other."""
    rng = np.random.default_rng(2)
    rows = [f"{i % 2},{rng.random():.6f},w{rng.integers(1000)}\n" for i in range(60000)]
    head, tail = "y,a,b\n" + "".join(rows[:30000]), "".join(rows[30000:])
    data = _compressed("zstd", head.encode()) + _compressed("zstd", tail.encode())
    path = tmp_path / "t.csv.zst"
    path.write_bytes(data)
    X, y = _concat(iter_csv(path, label="y", chunk_size=1000))
    assert X.shape[0] == 60000 and y.tolist() == [i % 2 for i in range(60000)]

    damaged = bytearray(data)
    damaged[len(data) // 4 : len(data) // 4 + 8] = bytes(8)  # in the first frame
    whole = decompressible("zstd", bytes(damaged)).count(b"\n")
    assert 0 < whole < 30000
    path.write_bytes(bytes(damaged))
    for source, name in ((path, str(path)), (NonSeekable(bytes(damaged), name="<stdin>"), "<stdin>")):
        with pytest.raises(TabularFormatError) as err:
            list(iter_csv(source, label="y", chunk_size=1000))
        assert str(err.value).startswith(f"{name}, line {whole + 1}: cannot decompress the zstd data (OSError: ")
        assert str(err.value).endswith("the file is corrupt or truncated") and "\n" not in str(err.value)


@pytest.mark.parametrize(("name", "kind"), [("t.csv.zst", "zstd"), ("t.csv.gz", "gzip")])
def test_a_compressed_file_cut_within_its_first_bytes_is_named_by_its_name(tmp_path, name, kind):
    """A .zst or .gz file of one byte (fewer than its magic bytes) was read as text (a .zst one: "the column name
    '(' ..."); its name says it is compressed, and it is an error naming the damage."""
    path = tmp_path / name
    path.write_bytes(_compressed(kind, b"y,a\n1,2\n")[:1])
    with pytest.raises(TabularFormatError) as err:
        iter_csv(path, label="y")
    assert str(err.value).startswith(f"{path}, line 1: cannot decompress the {kind} data (")
