// The library's entry point: every extension it holds, for
// ov::Core::add_extension(path), benchmark_app -extensions, ovc --extension
// and ov.convert_model(..., extension=path).
//
// * ovpool's ops (opset "ovpool"), needed to read IR that holds them, to
//   import blobs exported from such models, and by the conversions below;
// * ONNX frontend conversions (core.read_model("model.onnx"));
// * PyTorch frontend conversions (ov.convert_model(module, extension=path)).
#include <string>

#include "conversions.hpp"
#include "kernel.hpp"
#include "openvino/core/extension.hpp"
#include "openvino/core/version.hpp"
#include "ops.hpp"

#define OVPOOL_STR2(x) #x
#define OVPOOL_STR(x) OVPOOL_STR2(x)
#define OVPOOL_BUILT_AGAINST           \
    OVPOOL_STR(OPENVINO_VERSION_MAJOR) \
    "." OVPOOL_STR(OPENVINO_VERSION_MINOR) "." OVPOOL_STR(OPENVINO_VERSION_PATCH)

namespace {

std::vector<ov::Extension::Ptr> all_extensions() {
    using namespace ovpool_openvino;
    std::vector<ov::Extension::Ptr> ext = op_extensions();
    for (auto &e : onnx_extensions())
        ext.push_back(e);
    for (auto &e : pytorch_extensions())
        ext.push_back(e);
    return ext;
}

// The OpenVINO release of the process, "2026.4.1" out of its build number.
std::string runtime_release() {
    const std::string build = ov::get_openvino_version().buildNumber;
    return build.substr(0, build.find('-'));
}

}  // namespace

// What the library is and what it was built against (for diagnostics:
// ovpool.openvino.info(), the C++ test program).
extern "C" OPENVINO_CORE_EXPORTS const char *ovpool_openvino_info() {
    static const std::string info =
        std::string("libovpool_openvino: opset ovpool, built against OpenVINO ") +
        OVPOOL_BUILT_AGAINST + ", kernels " + ovpool_openvino::isa_name();
    return info.c_str();
}

OPENVINO_EXTENSION_C_API void OV_CREATE_EXTENSION(std::vector<ov::Extension::Ptr> &ext);
OPENVINO_EXTENSION_C_API void OV_CREATE_EXTENSION(std::vector<ov::Extension::Ptr> &ext) {
    // A library built against another release would call into ABI it does
    // not know; say so instead (the Python layer checks the same first).
    const std::string runtime = runtime_release();
    if (runtime != OVPOOL_BUILT_AGAINST)
        OPENVINO_THROW("libovpool_openvino was built against OpenVINO " OVPOOL_BUILT_AGAINST
                       " but this process runs OpenVINO ",
                       runtime, "; rebuild it with: python -m ovpool.openvino build");
    ext = all_extensions();
}
