"""Every pooling case of the ONNX backend node test suite shipped in `onnx`,
run through ovpool's numpy API against the case's expected outputs."""

import numpy as np
import pytest

import ovpool

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from references import onnx_pool_cases  # noqa: E402

CASES = onnx_pool_cases()


def run_node(node, inputs):
    """Run one ONNX pooling node through the ovpool API."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
    common = dict(
        strides=attrs.get("strides"),
        pads=attrs.get("pads"),
        dilations=attrs.get("dilations"),
        auto_pad=attrs.get("auto_pad", "NOTSET"),
        ceil_mode=attrs.get("ceil_mode", 0),
    )
    kind = node.op_type
    if kind == "AveragePool":
        return [
            ovpool.avg_pool(
                inputs[0],
                attrs["kernel_shape"],
                count_include_pad=attrs.get("count_include_pad", 0),
                **common,
            )
        ]
    if kind == "MaxPool":
        result = ovpool.max_pool(
            inputs[0],
            attrs["kernel_shape"],
            storage_order=attrs.get("storage_order", 0),
            return_indices=len(node.output) > 1,
            **common,
        )
        return list(result) if isinstance(result, tuple) else [result]
    if kind == "LpPool":
        return [ovpool.lp_pool(inputs[0], attrs["kernel_shape"], p=attrs.get("p", 2), **common)]
    if kind == "GlobalAveragePool":
        return [ovpool.global_avg_pool(inputs[0])]
    if kind == "GlobalMaxPool":
        return [ovpool.global_max_pool(inputs[0])]
    if kind == "GlobalLpPool":
        return [ovpool.global_lp_pool(inputs[0], p=attrs.get("p", 2))]
    if kind == "MaxUnpool":
        return [
            ovpool.max_unpool(
                inputs[0],
                inputs[1],
                attrs["kernel_shape"],
                strides=attrs.get("strides"),
                pads=attrs.get("pads"),
                output_shape=inputs[2] if len(inputs) > 2 else None,
            )
        ]
    raise AssertionError(f"unexpected op {kind}")


def test_the_suite_has_all_53_pool_cases():
    assert len(CASES) == 53


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backend_case(case):
    (node,) = case.model.graph.node
    assert case.data_sets, case.name
    for inputs, expected in case.data_sets:
        got = run_node(node, inputs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=case.rtol, atol=case.atol)
