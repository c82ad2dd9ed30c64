"""Malformed and hostile IR files: each is rejected by ovpool.ir with an IRError
naming the file and the line at fault, quickly, without resolving anything and
without large allocations. No OpenVINO needed (and OpenVINO is never given these
files: its 2026.4 reader segfaults on some of them)."""

import os
import re
import time
import tracemalloc

import numpy as np
import pytest
from ir_helpers import IR, pool_model

import ovpool
from ovpool import ir

MAX_SECONDS = 1.0
MAX_PEAK_BYTES = 64 << 20


def rejects(path, line=None, match=None):
    """read_model(path) (and calling it) raises IRError naming the file (and line)."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ovpool.IRError) as info:
            ir.read_model(path)
    finally:
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    message = str(info.value)
    assert os.fspath(path) in message, message
    assert elapsed < MAX_SECONDS, f"took {elapsed:.2f} s: {message}"
    assert peak < MAX_PEAK_BYTES, f"peak {peak >> 20} MiB: {message}"
    assert isinstance(info.value, ovpool.OvpoolError) and isinstance(info.value, ValueError)
    if line is not None:
        assert f"{os.fspath(path)}:{line}:" in message, message
        assert info.value.line == line
    if match is not None:
        assert re.search(match, message), message
    return message


def write(tmp_path, text, stem="model", blob=b""):
    path = tmp_path / f"{stem}.xml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    (tmp_path / f"{stem}.bin").write_bytes(blob)
    return path


def line_of(text, needle, nth=0):
    """1-based line of the nth occurrence of ``needle`` in ``text``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    return text.count("\n", 0, pos) + 1


@pytest.fixture
def base(tmp_path):
    """A valid model: Parameter -> MaxPool-8 -> 2 Results; one line per layer."""
    builder, path = pool_model(tmp_path)
    ir.read_model(path)  # valid as written
    return builder, path, path.read_text() if hasattr(path, "read_text") else open(path).read()


def mutate(tmp_path, text, old, new, count=1):
    assert old in text, old
    return write(tmp_path, text.replace(old, new, count), stem="bad")


# --------------------------------------------------------------------------
# Not XML, truncated, encodings
# --------------------------------------------------------------------------


def test_empty_file(tmp_path):
    rejects(write(tmp_path, ""), match="empty")


def test_binary_garbage(tmp_path):
    rejects(write(tmp_path, bytes(range(256)) * 4), line=1, match="not an XML")


def test_plain_text(tmp_path):
    rejects(write(tmp_path, "hello\nworld\n"), line=1, match="not an XML")


def test_truncated_file(tmp_path, base):
    _, _, text = base
    cut = text[: len(text) // 2]
    message = rejects(write(tmp_path, cut, stem="cut"), match="malformed XML")
    assert re.search(r"cut\.xml:\d+:", message)


def test_mismatched_tags(tmp_path, base):
    _, _, text = base
    bad = text.replace("</layers>", "</layer>", 1)
    rejects(
        write(tmp_path, bad, stem="bad"),
        line=line_of(bad, "</layer>\n  <edges>"),
        match="malformed XML",
    )


def test_not_an_ir(tmp_path):
    rejects(
        write(tmp_path, '<?xml version="1.0"?>\n<html><body/></html>\n'), line=2, match="not <net>"
    )


def test_unsupported_ir_version(tmp_path, base):
    _, _, text = base
    rejects(mutate(tmp_path, text, 'version="11"', 'version="7"'), line=2, match="IR version")


def test_utf16_document(tmp_path, base):
    _, _, text = base
    rejects(write(tmp_path, text.encode("utf-16")), match="not an XML")


def test_declared_foreign_encoding(tmp_path, base):
    _, _, text = base
    bad = text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="IBM037"?>')
    rejects(write(tmp_path, bad), line=1, match="encoding")


def test_undefined_entity_reference(tmp_path, base):
    _, _, text = base
    bad = text.replace('name="pool"', 'name="&xxe;"')
    rejects(write(tmp_path, bad), line=line_of(bad, "&xxe;"), match="malformed XML")


def test_deep_nesting(tmp_path):
    text = '<?xml version="1.0"?>\n<net version="11">' + "<a>" * 5000 + "</a>" * 5000 + "</net>\n"
    rejects(write(tmp_path, text), match="malformed XML")


def test_xml_larger_than_the_cap(tmp_path, base, monkeypatch):
    _, path, text = base
    monkeypatch.setattr(ir, "MAX_XML_BYTES", len(text.encode()) - 1)
    rejects(path, match="larger than")


# --------------------------------------------------------------------------
# DOCTYPE and entities: rejected before parsing, never resolved
# --------------------------------------------------------------------------

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE net [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<net name="&lol9;" version="11"><layers/></net>
"""


def test_billion_laughs(tmp_path):
    rejects(write(tmp_path, BILLION_LAUGHS), line=2, match="DOCTYPE")


def test_external_entity_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    text = (
        f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
        '<net name="&xxe;" version="11"><layers/></net>\n'
    )
    message = rejects(write(tmp_path, text), line=2, match="DOCTYPE")
    assert "TOP-SECRET" not in message


def test_external_entity_network(tmp_path):
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM '
        '"http://127.0.0.1:9/evil.dtd">]>\n<net name="&xxe;" version="11"/>\n'
    )
    rejects(write(tmp_path, text), line=2, match="DOCTYPE")


def test_external_dtd(tmp_path):
    text = '<?xml version="1.0"?>\n\n<!DOCTYPE net SYSTEM "/etc/passwd">\n<net version="11"/>\n'
    rejects(write(tmp_path, text), line=3, match="DOCTYPE")


def test_parameter_entity(tmp_path):
    text = (
        '<?xml version="1.0"?>\n'
        '<!DOCTYPE net [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>\n'
        '<net version="11"/>\n'
    )
    rejects(write(tmp_path, text), line=2, match="DOCTYPE")


def test_lowercase_doctype(tmp_path, base):
    _, _, text = base
    bad = text.replace("<net ", "<!doctype net>\n<net ", 1)
    rejects(write(tmp_path, bad), line=2)


# --------------------------------------------------------------------------
# Graph structure
# --------------------------------------------------------------------------


def test_edge_to_missing_layer(tmp_path, base):
    # OpenVINO 2026.4's own reader segfaults on this one
    _, _, text = base
    old = '<edge from-layer="1" from-port="1" to-layer="2" to-port="0" />'
    bad_text = text.replace(old, old.replace('to-layer="2"', 'to-layer="99"'))
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'to-layer="99"'),
        match="missing layer",
    )


def test_edge_from_missing_layer(tmp_path, base):
    _, _, text = base
    old = '<edge from-layer="0" from-port="0" to-layer="1" to-port="0" />'
    bad_text = text.replace(old, old.replace('from-layer="0"', 'from-layer="42"'))
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'from-layer="42"'),
        match="missing layer",
    )


def test_edge_to_missing_port(tmp_path, base):
    _, _, text = base
    old = '<edge from-layer="1" from-port="1" to-layer="2" to-port="0" />'
    bad_text = text.replace(old, old.replace('to-port="0"', 'to-port="5"'))
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'to-port="5"'),
        match="missing port",
    )


def test_edge_from_missing_port(tmp_path, base):
    _, _, text = base
    old = '<edge from-layer="1" from-port="2" to-layer="3" to-port="0" />'
    bad_text = text.replace(old, old.replace('from-port="2"', 'from-port="7"'))
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'from-port="7"'),
        match="missing port",
    )


def test_edge_from_an_input_port(tmp_path, base):
    _, _, text = base
    old = '<edge from-layer="1" from-port="1" to-layer="2" to-port="0" />'
    bad_text = text.replace(old, old.replace('from-port="1"', 'from-port="0"'))
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, old.replace('from-port="1"', 'from-port="0"')),
        match="missing port",
    )


def test_two_edges_into_one_port(tmp_path, base):
    _, _, text = base
    extra = '<edge from-layer="1" from-port="2" to-layer="2" to-port="0" />'
    bad_text = text.replace("</edges>", f"  {extra}\n  </edges>")
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, extra),
        match="two incoming edges",
    )


def test_unconnected_input_port(tmp_path, base):
    _, _, text = base
    old = '<edge from-layer="1" from-port="2" to-layer="3" to-port="0" />'
    bad_text = text.replace(old, "")
    rejects(write(tmp_path, bad_text, stem="bad"), match="no incoming edge")


def test_non_integer_edge(tmp_path, base):
    _, _, text = base
    bad_text = text.replace('to-layer="2"', 'to-layer="two"', 1)
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'to-layer="two"'),
        match="not a non-negative integer",
    )


def test_cycle(tmp_path):
    builder = IR()
    x = builder.parameter((1, 1, 8), name="x")
    a = builder.layer(
        "MaxPool",
        "opset1",
        [(x, 0)],
        [("f32", (1, 1, 8))],
        {"kernel": "1", "strides": "1"},
        name="a",
    )
    b = builder.layer(
        "MaxPool",
        "opset1",
        [(a, 0)],
        [("f32", (1, 1, 8))],
        {"kernel": "1", "strides": "1"},
        name="b",
    )
    builder.result(b)
    # a reads b instead of x: a -> b -> a
    builder.edges[0] = (b, 1, a, 0)
    path = builder.write(tmp_path)
    rejects(path, match=r"cycle: .*'a'.*'b'|cycle: .*'b'.*'a'")


def test_self_loop(tmp_path):
    builder = IR()
    x = builder.parameter((1, 1, 8), name="x")
    a = builder.layer(
        "MaxPool",
        "opset1",
        [(x, 0)],
        [("f32", (1, 1, 8))],
        {"kernel": "1", "strides": "1"},
        name="a",
    )
    builder.result(a)
    builder.edges[0] = (a, 1, a, 0)
    rejects(builder.write(tmp_path), match="cycle")


def test_duplicate_layer_ids(tmp_path, base):
    _, _, text = base
    bad_text = text.replace('<layer id="3"', '<layer id="2"')
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, '<layer id="2"', 1),
        match="duplicate layer id 2",
    )


def test_duplicate_port_ids(tmp_path, base):
    _, _, text = base
    bad_text = text.replace('<port id="2" precision="I64"', '<port id="1" precision="I64"', 1)
    rejects(write(tmp_path, bad_text, stem="bad"), match="two ports with id 1")


def test_no_result(tmp_path):
    builder = IR()
    builder.parameter((1, 1, 4), name="x")
    rejects(builder.write(tmp_path), match="no Result")


def test_wrong_number_of_ports(tmp_path, base):
    _, _, text = base
    bad_text = text.replace('version="opset8"', 'version="opset1"')  # MaxPool-1 has 1 output
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'name="pool"'),
        match="2 output ports",
    )


# --------------------------------------------------------------------------
# Layers, attributes, shapes
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "type_, version, what",
    [
        ("FancyPool", "opset8", "unknown layer type 'FancyPool'"),
        ("MaxPool", "opset99", "unknown layer version 'opset99'"),
        ("MaxPool", "myopset", "unknown layer version 'myopset'"),
        ("MaxPool", "opset17", "opset17 has no layer type 'MaxPool'"),
        ("AdaptiveMaxPool", "opset1", "opset1 has no layer type 'AdaptiveMaxPool'"),
        ("Constant", "opset1", "unknown layer type 'Constant'"),
        ("MaxUnpooling", "ovpool", "ovpool's opset has no layer type"),
    ],
)
def test_unknown_type_or_version(tmp_path, base, type_, version, what):
    _, _, text = base
    bad_text = text.replace(
        'type="MaxPool" version="opset8"', f'type="{type_}" version="{version}"'
    )
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, 'name="pool"'),
        match=re.escape(what),
    )


@pytest.mark.parametrize("attr", ["kernel", "strides"])
def test_missing_required_attribute(tmp_path, base, attr):
    _, _, text = base
    bad_text = re.sub(rf' {attr}="[^"]*"', "", text, count=1)
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, "<data kernel" if attr != "kernel" else "<data strides"),
        match=f"required attribute '{attr}'",
    )


@pytest.mark.parametrize(
    "old, new, what",
    [
        ('kernel="2, 2"', 'kernel="0, 2"', r"kernel=\[0, 2\]: every entry must be >= 1"),
        (
            'kernel="2, 2"',
            'kernel="2, 2, 2"',
            r"kernel=\[2, 2, 2\] gives 3 spatial dims but the data "
            r"input has shape \[1,2,8,8\]",
        ),
        ('kernel="2, 2"', 'kernel="2"', "kernel=\\[2\\] gives 1 spatial dims"),
        ('kernel="2, 2"', 'kernel="2,,2"', "is not an integer"),
        ('kernel="2, 2"', 'kernel="2.5, 2"', "is not an integer"),
        ('kernel="2, 2"', 'kernel="' + "1, " * 100 + '1"', "at most 64"),
        ('kernel="2, 2"', 'kernel="' + "9" * 400 + ', 2"', "is not an integer"),
        ('kernel="2, 2"', 'kernel="9, 9"', "does not fit"),
        ('strides="2, 2"', 'strides="0, 2"', ">= 1"),
        ('strides="2, 2"', 'strides="2, 2, 1"', "strides must have 2 entries"),
        ('pads_begin="0, 0"', 'pads_begin="-1, 0"', ">= 0"),
        (
            'rounding_type="floor"',
            'rounding_type="ceil_torch"',
            "rounding_type='ceil_torch' must be",
        ),
        ('auto_pad="explicit"', 'auto_pad="notset"', "auto_pad='notset' must be one of"),
    ],
)
def test_bad_attribute(tmp_path, base, old, new, what):
    _, _, text = base
    bad_text = text.replace(old, new, 1)
    rejects(
        write(tmp_path, bad_text, stem="bad"), line=line_of(bad_text, "<data kernel"), match=what
    )


def test_bad_boolean(tmp_path):
    builder, path = pool_model(
        tmp_path,
        type_="AvgPool",
        version="opset1",
        n_out=1,
        data={"kernel": "2, 2", "strides": "2, 2", "exclude-pad": "maybe"},
    )
    text = open(path).read()
    rejects(path, line=line_of(text, "<data kernel"), match="exclude-pad='maybe' is not a boolean")


def test_avg_pool_exclude_pad_with_pads_as_large_as_the_kernel(tmp_path):
    builder, path = pool_model(
        tmp_path,
        type_="AvgPool",
        version="opset1",
        n_out=1,
        out_shape=(1, 2, 5, 5),
        data={
            "kernel": "2, 2",
            "strides": "2, 2",
            "pads_begin": "2, 0",
            "pads_end": "0, 0",
            "exclude-pad": "true",
        },
    )
    rejects(path, line=line_of(open(path).read(), 'name="pool"'), match="must be larger")


def test_bad_axis(tmp_path, base):
    _, _, text = base
    bad_text = text.replace('auto_pad="explicit"', 'auto_pad="explicit" axis="4"', 1)
    rejects(write(tmp_path, bad_text, stem="bad"), match=r"axis must be in \[-4, 3\], got 4")


@pytest.mark.parametrize(
    "size, what",
    [
        (np.array([0, 3], np.int64), ">= 1"),
        (np.array([3, 3, 3], np.int64), r"output_size of shape \[3\] gives 3 spatial dims"),
        (np.array([[3, 3]], np.int64), "must be 1-D"),
        (np.array([3.0, 3.0], np.float32), "must be i32 or i64"),
    ],
)
def test_bad_output_size(tmp_path, size, what):
    builder = IR()
    x = builder.parameter((1, 2, 8, 8), name="x")
    c = builder.const(size, name="size")
    pool = builder.layer(
        "AdaptiveAvgPool", "opset8", [(x, 0), (c, 0)], [("f32", (1, 2, 3, 3))], name="pool"
    )
    builder.result(pool)
    path = builder.write(tmp_path)
    rejects(path, line=line_of(open(path).read(), 'name="pool"'), match=what)


def test_parameter_of_a_trillion_elements(tmp_path):
    builder = IR()
    x = builder.parameter((1000000, 1000000), name="x")
    builder.result(x)
    path = builder.write(tmp_path)
    rejects(path, line=line_of(open(path).read(), 'name="x"'), match="more than")


def test_pool_output_of_a_trillion_elements(tmp_path):
    builder = IR()
    x = builder.parameter((1, 1, 4, 4), name="x")
    c = builder.const(np.array([1000000, 1000000], np.int64), name="size")
    pool = builder.layer(
        "AdaptiveAvgPool",
        "opset8",
        [(x, 0), (c, 0)],
        [("f32", (1, 1, 1000000, 1000000))],
        name="pool",
    )
    builder.result(pool)
    path = builder.write(tmp_path)
    rejects(path, line=line_of(open(path).read(), 'name="pool"'), match="more than")


@pytest.mark.parametrize(
    "shape_attr, what",
    [
        ("1,-5,8", "bad dim -5"),
        ("1,abc,8", "not an integer"),
        ("1,8..2,8", "bad bounded dim"),
        ("1," + "9" * 30 + ",8", "not an integer"),
    ],
)
def test_bad_parameter_shape(tmp_path, shape_attr, what):
    builder = IR()
    x = builder.parameter((1, 8, 8), name="x", shape_attr=shape_attr)
    builder.result(x)
    path = builder.write(tmp_path)
    rejects(path, line=line_of(open(path).read(), "<data shape"), match=what)


def test_bad_port_dim(tmp_path, base):
    _, _, text = base
    bad_text = text.replace("<dim>8</dim>", "<dim>-3</dim>", 1)
    rejects(
        write(tmp_path, bad_text, stem="bad"),
        line=line_of(bad_text, "<dim>-3</dim>"),
        match="bad dimension",
    )


def test_unknown_element_type(tmp_path):
    builder = IR()
    x = builder.parameter((1, 8), etype="f33", name="x")
    builder.result(x)
    path = builder.write(tmp_path)
    rejects(path, match="element_type='f33' must be one of")


# --------------------------------------------------------------------------
# Const layers and the .bin
# --------------------------------------------------------------------------


def const_model(tmp_path, data_attrs, blob):
    builder = IR()
    c = builder.layer("Const", "opset1", [], [("f32", (2, 3))], data_attrs, name="c")
    builder.result(c)
    builder.blob = bytearray(blob)
    path = builder.write(tmp_path)
    return path, open(path).read()


def test_const_past_the_end_of_the_bin(tmp_path):
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 8, "size": 24}, b"\0" * 24
    )
    rejects(path, line=line_of(text, 'name="c"'), match="past the end")


def test_const_size_disagrees_with_shape(tmp_path):
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 0, "size": 20}, b"\0" * 24
    )
    rejects(path, line=line_of(text, 'name="c"'), match="needs 24 bytes, not 20")


@pytest.mark.parametrize(
    "size, what",
    [(24, "claims 1000000000000 elements"), (4 * 10**12, "size=4000000000000 is absurdly large")],
)
def test_const_of_a_trillion_elements(tmp_path, size, what):
    path, text = const_model(
        tmp_path,
        {"element_type": "f32", "shape": "1000000, 1000000", "offset": 0, "size": size},
        b"\0" * 24,
    )
    rejects(path, line=line_of(text, 'name="c"'), match=what)


def test_const_huge_offset(tmp_path):
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 10**17, "size": 24}, b"\0" * 24
    )
    rejects(path, line=line_of(text, 'name="c"'), match="offset=100000000000000000 is absurdly")
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 10**9, "size": 24}, b"\0" * 24
    )
    rejects(path, line=line_of(text, 'name="c"'), match="past the end")


def test_const_missing_attribute(tmp_path):
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 0}, b"\0" * 24
    )
    rejects(path, line=line_of(text, "<data element_type"), match="'size' is missing")


def test_const_without_bin(tmp_path):
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 0, "size": 24}, b"\0" * 24
    )
    os.remove(str(path)[:-4] + ".bin")
    message = rejects(path, line=line_of(text, 'name="c"'), match="needs the weights file")
    assert "model.bin" in message


def test_bin_shrunk_after_reading(tmp_path):
    path, text = const_model(
        tmp_path, {"element_type": "f32", "shape": "2, 3", "offset": 0, "size": 24}, b"\0" * 24
    )
    model = ir.read_model(path)
    with open(str(path)[:-4] + ".bin", "wb") as f:
        f.write(b"\0" * 8)
    with pytest.raises(ovpool.IRError, match=r"model\.xml:\d+: .*shorter"):
        model()


# --------------------------------------------------------------------------
# Call-time inputs
# --------------------------------------------------------------------------


@pytest.fixture
def dynamic_model(tmp_path):
    builder = IR()
    x = builder.parameter((None, 2, None, None), name="x", shape_attr="?,2,4..16,4..16")
    pool = builder.layer(
        "MaxPool",
        "opset1",
        [(x, 0)],
        [("f32", (None, 2, None, None))],
        {"kernel": "2, 2", "strides": "2, 2"},
        name="pool",
    )
    builder.result(pool)
    path = builder.write(tmp_path)
    return ir.read_model(path), path, line_of(open(path).read(), 'name="x"')


@pytest.mark.parametrize(
    "array, what",
    [
        (np.zeros((1, 2, 8, 8), np.float64), "got a float64 array"),
        (np.zeros((1, 2, 8, 8), np.int32), "got a int32 array"),
        (np.zeros((1, 3, 8, 8), np.float32), r"must have shape f32\[\?,2,4\.\.16,4\.\.16\]"),
        (np.zeros((1, 2, 8), np.float32), "must have shape"),
        (np.zeros((1, 2, 3, 8), np.float32), "got \\[1, 2, 3, 8\\]"),
        (np.zeros((1, 2, 8, 17), np.float32), "got \\[1, 2, 8, 17\\]"),
        ("not an array", "got a <U12 array"),
    ],
)
def test_bad_call_inputs(dynamic_model, array, what):
    model, path, line = dynamic_model
    with pytest.raises(ovpool.IRError, match=what) as info:
        model(array)
    assert f"{path}:{line}:" in str(info.value)


def test_wrong_number_of_inputs(dynamic_model):
    model, path, _ = dynamic_model
    x = np.zeros((1, 2, 8, 8), np.float32)
    with pytest.raises(ovpool.IRError, match="takes 1 inputs") as info:
        model(x, x)
    assert str(path) in str(info.value)
    with pytest.raises(ovpool.IRError, match="no input 'y'"):
        model({"y": x})
    with pytest.raises(ovpool.IRError, match="'x' is missing"):
        model({})
    assert model({"x": x})[0].shape == (1, 2, 4, 4)


def test_dynamic_input_too_small_for_the_kernel(tmp_path):
    builder = IR()
    x = builder.parameter((1, 1, None), name="x")
    pool = builder.layer(
        "MaxPool",
        "opset1",
        [(x, 0)],
        [("f32", (1, 1, None))],
        {"kernel": "5", "strides": "1"},
        name="pool",
    )
    builder.result(pool)
    path = builder.write(tmp_path)
    model = ir.read_model(path)
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 8)
    np.testing.assert_array_equal(model(x)[0], [[[4, 5, 6, 7]]])
    with pytest.raises(ovpool.IRError, match="does not fit") as info:
        model(np.zeros((1, 1, 3), np.float32))
    line = line_of(open(path).read(), 'name="pool"')
    assert f"{path}:{line}:" in str(info.value)
    # and again after it: a shape that failed is never taken as inferred
    with pytest.raises(ovpool.IRError, match="does not fit"):
        model(np.zeros((1, 1, 3), np.float32))
    np.testing.assert_array_equal(model(x)[0], [[[4, 5, 6, 7]]])
