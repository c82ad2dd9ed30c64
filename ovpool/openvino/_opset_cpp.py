"""Write the extension library's op table from ovpool's op schema.

``python _opset_cpp.py OPSET_JSON OUTPUT`` writes the C++ table of the opset
"ovpool" (``OpId``, ``kOpset``: the types of ``src/openvino/schema.hpp``)
from ``ovpool/opset.json``. The library's CMake build runs it (its output
goes to the build folder, never into the sources), so the library's ops and
ovpool's layer table come from one schema. Run alone, by its path: it needs
the standard library and ``ovpool/_opset.py`` beside the schema only.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path


def _load_opset_module(schema_path):
    path = Path(schema_path).resolve().with_name("_opset.py")
    spec = importlib.util.spec_from_file_location("_ovpool_opset_schema", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def _c(text):
    return json.dumps(text)  # a C string literal: JSON's escapes are C's


def _etype(name):
    return f"ov::element::Type_t::{name}"


def _type_set(schema, key):
    return f"{{kTypes_{key}, {len(schema.element_types[key])}, {_c(schema.type_text[key])}}}"


_KINDS = {
    "int": "int_",
    "float": "float_",
    "bool": "bool_",
    "str": "str",
    "ints": "ints",
    "etype": "etype",
}


def _attr(a):
    default = {"int": 0, "float": 0.0, "bool": False, "str": "", "etype": "dynamic"}
    value = default.get(a.kind) if a.default is None else a.default
    return (
        f"    {{{_c(a.name)}, AttrKind::{_KINDS[a.kind]}, {str(a.required).lower()}, "
        f"{int(value) if a.kind == 'int' else 0}, "
        f"{float(value) if a.kind == 'float' else 0.0!r}, "
        f"{str(bool(value)).lower() if a.kind == 'bool' else 'false'}, "
        f"{_c(value if a.kind == 'str' else '')}, "
        f"{_etype(value if a.kind == 'etype' else 'dynamic')}, "
        f"{a.per_axis}, {a.fill}, {str(a.spatial).lower()}}},"
    )


def render(schema):
    """The C++ source of the op table of ``schema`` (an ``_opset.Schema``)."""
    lines = [
        '// The op table of the opset "ovpool", generated from ovpool/opset.json by',
        "// ovpool/openvino/_opset_cpp.py when the library is built: edit the schema,",
        "// never this file (schema.hpp says what each field means).",
        "",
    ]
    for key, types in schema.element_types.items():
        lines.append(
            f"inline constexpr ov::element::Type_t kTypes_{key}[] = "
            f"{{{', '.join(_etype(t) for t in types)}}};"
        )
    lines.append("")
    lines.append("enum class OpId : size_t {")
    lines += [f"    {op.type}," for op in schema.ops]
    lines.append("};")
    lines.append(f"inline constexpr size_t kOpCount = {len(schema.ops)};")
    lines.append("")
    for op in schema.ops:
        names = [a.name for a in op.attrs]
        if op.attrs:
            lines.append(f"inline constexpr AttrSchema kAttrs_{op.type}[] = {{")
            lines += [_attr(a) for a in op.attrs]
            lines.append("};")
        lines.append(f"inline constexpr InputSchema kInputs_{op.type}[] = {{")
        for i in op.inputs:
            lines.append(
                f"    {{{_c(i.name)}, {_type_set(schema, i.types)}, "
                f"{str(i.value).lower()}, {str(i.optional).lower()}}},"
            )
        lines.append("};")
        lines.append(f"inline constexpr OutputSchema kOutputs_{op.type}[] = {{")
        for o in op.outputs:
            attr = names.index(o.attr) if o.rule == "attribute" else -1
            type_set = '{nullptr, 0, ""}' if o.types is None else _type_set(schema, o.types)
            lines.append(
                f"    {{{_c(o.name)}, OutputRule::{o.rule}, {attr}, "
                f"{_etype(o.fixed or 'dynamic')}, {type_set}}},"
            )
        lines.append("};")
    lines.append("")
    lines.append("inline constexpr OpSchema kOpset[kOpCount] = {")
    for op in schema.ops:
        spatial = next((k for k, a in enumerate(op.attrs) if a.spatial), -1)
        attrs = f"kAttrs_{op.type}" if op.attrs else "nullptr"
        lines.append(
            f"    {{{_c(op.type)}, Form::{op.form}, ovpool::Semantics::{op.semantics}, "
            f"ovpool::Family::{op.family}, {attrs}, {len(op.attrs)}, kInputs_{op.type}, "
            f"{len(op.inputs)}, kOutputs_{op.type}, {len(op.outputs)}, {spatial}}},"
        )
    lines.append("};")
    lines.append("")
    # the element types a data input takes, each the kernel core's type of
    # the same name (a new one needs the core's DType first)
    data_types = []
    for op in schema.ops:
        for t in schema.element_types[op.inputs[0].types]:
            if t not in data_types:
                data_types.append(t)
    lines.append("inline constexpr CoreType kCoreTypes[] = {")
    lines += [f"    {{{_etype(t)}, ovpool::DType::{t}}}," for t in data_types]
    lines.append("};")
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} OPSET_JSON OUTPUT", file=sys.stderr)
        return 2
    schema_path, output = argv[1], Path(argv[2])
    text = render(_load_opset_module(schema_path).load(schema_path))
    if not output.is_file() or output.read_text() != text:  # (a rewrite would rebuild all)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
