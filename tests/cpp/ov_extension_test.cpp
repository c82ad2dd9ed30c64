// A C++ OpenVINO application that knows nothing of ovpool but its library's
// path: it loads libovpool_openvino.so with ov::Core::add_extension, reads
// an IR holding ovpool ops, runs it on the CPU and writes the outputs.
//
//   ov_extension_test LIBRARY MODEL.xml OUT_DIR IN_0.bin [IN_1.bin ...]
//
// Each IN_k.bin holds the raw bytes of input k (its shape and element type
// are the model's, which must be static); output k is written to
// OUT_DIR/out_k.bin. Prints the library's own description, then "ok".
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "openvino/openvino.hpp"

int main(int argc, char **argv) {
    if (argc < 4) {
        std::cerr << "usage: ov_extension_test LIBRARY MODEL.xml OUT_DIR IN_0.bin ...\n";
        return 2;
    }
    const std::string library = argv[1], model_path = argv[2], out_dir = argv[3];
    try {
        ov::Core core;
        core.add_extension(library);
        auto model = core.read_model(model_path);
        int ovpool_ops = 0;
        for (const auto &node : model->get_ordered_ops())
            ovpool_ops += std::string(node->get_type_info().version_id) == "ovpool";
        if (ovpool_ops == 0) {
            std::cerr << "the model holds no ovpool op\n";
            return 1;
        }
        auto compiled =
            core.compile_model(model, "CPU", ov::hint::inference_precision(ov::element::f32));
        auto request = compiled.create_infer_request();
        const auto inputs = compiled.inputs();
        if (static_cast<size_t>(argc - 4) != inputs.size()) {
            std::cerr << "the model has " << inputs.size() << " inputs\n";
            return 2;
        }
        for (size_t k = 0; k < inputs.size(); k++) {
            std::ifstream f(argv[4 + k], std::ios::binary);
            std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                                    std::istreambuf_iterator<char>());
            ov::Tensor tensor(inputs[k].get_element_type(), inputs[k].get_shape());
            if (bytes.size() != tensor.get_byte_size()) {
                std::cerr << "input " << k << ": " << bytes.size() << " bytes, expected "
                          << tensor.get_byte_size() << "\n";
                return 2;
            }
            std::memcpy(tensor.data(), bytes.data(), bytes.size());
            request.set_input_tensor(k, tensor);
        }
        request.infer();
        for (size_t k = 0; k < compiled.outputs().size(); k++) {
            const ov::Tensor out = request.get_output_tensor(k);
            std::ofstream f(out_dir + "/out_" + std::to_string(k) + ".bin", std::ios::binary);
            f.write(static_cast<const char *>(out.data()),
                    static_cast<std::streamsize>(out.get_byte_size()));
        }
        // the library describes itself through a plain C symbol
        if (void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
            using Info = const char *(*)();
            if (auto info = reinterpret_cast<Info>(dlsym(handle, "ovpool_openvino_info")))
                std::cout << info() << "\n";
            dlclose(handle);
        }
        std::cout << ovpool_ops << " ovpool ops\nok\n";
    } catch (const std::exception &exc) {
        std::cerr << exc.what() << "\n";
        return 1;
    }
    return 0;
}
