// A runtime tensor made in C++, handed to torch without a copy, changed by torch, read in C++.
#include <isthmus/py.hpp>

#include <iostream>

using namespace isthmus;
using namespace isthmus::literals;

int main() {
    try {
        python::interpreter interp;
        pyvalue torch;
        try {
            torch = pyimport("torch");
        } catch (const python_error& e) {
            std::cout << "tensor_to_torch: skipped, PyTorch is not installed\n";
            return 0;
        }
        // A 3x4 float32 tensor from the runtime.
        tensor t = tensor::empty({3, 4}, dtype::float32, MEMRESOURCE_CPU);
        t.fill(1.0);
        std::cout << "C++ tensor before:\n" << t << "\n";

        // The same memory as a torch tensor (torch.from_numpy on a NumPy view; no copy).
        pyvalue pt = to_torch(t);
        std::cout << "torch sees: " << pt << "\n";
        const bool shared = pt.attr("data_ptr")().cast<uintptr_t>() ==
                            reinterpret_cast<uintptr_t>(t.lock(LOCK_READ, MEMRESOURCE_CPU));
        t.unlock(LOCK_READ, MEMRESOURCE_CPU);
        std::cout << "same address: " << (shared ? "yes" : "no") << "\n";

        // torch changes it in place: row i becomes i * 10 + column, plus a matmul result.
        pt.attr("copy_")(
            torch.attr("arange")(12, "dtype"_kw = torch.attr("float32")).attr("reshape")(3, 4));
        pt[0] = pt[0] * 10;
        pt.attr("add_")(1);
        std::cout << "C++ tensor after torch wrote it:\n" << t << "\n";
        const float want = (0 * 4 + 3) * 10 + 1;
        if (!shared || t.at<float>({0, 3}) != want || t.at<float>({2, 3}) != 12.0f) {
            std::cerr << "tensor_to_torch: the tensor does not show torch's writes\n";
            return 1;
        }
        // And back: a torch tensor read as a runtime tensor, still without a copy.
        tensor back = from_py<tensor>(pt.attr("t")());
        std::cout << "torch's transpose as a runtime view, shape " << shape_str(back.shape())
                  << ", element [3, 2] = " << back.at<float>({3, 2}) << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "tensor_to_torch: " << e.what() << "\n";
        return 1;
    }
}
