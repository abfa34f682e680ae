// A C++ host of the installed isthmus: embeds Python, uses NumPy and torch, shares a tensor.
// Exits non-zero on any mismatch, so the CTest test `consumer_embed_install` fails.
#include <isthmus/isthmus.hpp>
#include <isthmus/py.hpp>

#include <cstdlib>
#include <iostream>

using namespace isthmus;
using namespace isthmus::literals;

namespace {
int failures = 0;
void check(bool ok, const char* what) {
    if (!ok) {
        std::cerr << "consumer_embed: FAILED: " << what << "\n";
        ++failures;
    }
}
} // namespace

int main() {
    try {
        python::interpreter py;
        pyvalue np = pyimport("numpy");
        pyvalue a = np.attr("arange")(6).attr("reshape")(pyint({2, 3}));
        check(from_py<int>(a.attr("sum")()) == 15, "numpy sum");
        tensor t = tensor::from_vector(std::vector<double>{1, 2, 3});
        pyvalue view = to_numpy(t);
        view *= 2;
        check(t.at<double>({2}) == 6.0, "NumPy writes the runtime tensor");
        try {
            pyvalue torch = pyimport("torch");
            pyvalue pt = to_torch(t);
            pt.attr("add_")(1);
            check(t.at<double>({0}) == 3.0, "torch writes the runtime tensor");
            check(bool(torch.attr("is_tensor")(pt)), "torch tensor");
            std::cout << "consumer_embed: torch " << torch.attr("__version__").str() << "\n";
        } catch (const python_error& e) {
            if (e.type_name() != "ModuleNotFoundError") throw;
            std::cout << "consumer_embed: torch not installed, skipped\n";
        }
        std::cout << "consumer_embed: numpy " << np.attr("__version__").str() << "\n";
    } catch (const std::exception& e) {
        std::cerr << "consumer_embed: unexpected exception: " << e.what() << "\n";
        return 2;
    }
    if (failures != 0) return 1;
    std::cout << "consumer_embed: OK\n";
    return 0;
}
