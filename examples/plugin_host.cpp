// A C++ host: loads a plugin through the isthmus loader, calls a function, runs a kernel.
#include <isthmus/plugin_host.hpp>

#include <cmath>
#include <iostream>

namespace pl = isthmus::plugin_host;
using isthmus::tensor;
using isthmus::value;

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : HOST_DEMO_PLUGIN;
    auto lib = pl::load(path);
    std::cout << lib->describe() << "\n\n";

    // A function, looked up with a C++ signature.
    const tensor v = tensor::from_vector(std::vector<double>{3, 4, 12, 84});
    auto rms = pl::typed<double(tensor)>(*lib, "rms");
    const double r = rms(v);
    std::cout << "rms([3, 4, 12, 84]) = " << r << "\n";

    // A kernel over a 2-d space: a clamped 3x3 blur of a 4x5 ramp.
    std::vector<double> ramp(20);
    for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<double>(i);
    const tensor x = tensor::from_vector(ramp, {4, 5});
    tensor y = tensor::empty({4, 5}, isthmus::dtype::float64, isthmus::MEMRESOURCE_CPU);
    const value args[] = {x, y};
    pl::parallel_do({4, 5}, args, *lib->get_kernel("blur3"));
    std::cout << "blur3(ramp 4x5) =\n" << y << "\n";

    // Bad input raises a typed error; the host carries on.
    try {
        rms(tensor::from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2})); // a matrix, not a vector
    } catch (const isthmus::type_error& e) {
        std::cout << "type_error: " << e.what() << "\n";
    }
    const bool ok =
        std::abs(r - std::sqrt((9.0 + 16 + 144 + 7056) / 4)) < 1e-12 &&
        std::abs(y.at<double>({0, 0}) - (0 + 0 + 1 + 0 + 0 + 1 + 5 + 5 + 6) / 9.0) < 1e-12;
    std::cout << (ok ? "plugin_host: OK" : "plugin_host: WRONG RESULTS") << "\n";
    return ok ? 0 : 1;
}
