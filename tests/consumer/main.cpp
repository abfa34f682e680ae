// The consumer of an installed isthmus: creates, fills, prints and checks a tensor.
// Exits non-zero on any mismatch, so the CTest test `consumer_install` fails.
#include <isthmus/isthmus.hpp>

#include <cstdlib>
#include <iostream>
#include <vector>

static_assert(__cplusplus >= 202002L, "isthmus::isthmus must bring C++20 to its users");

namespace {
int failures = 0;

void check(bool ok, const char* what) {
    if (!ok) {
        std::cerr << "consumer: FAILED: " << what << "\n";
        ++failures;
    }
}
} // namespace

int main() {
    try {
        auto t = isthmus::tensor::empty({2, 3}, isthmus::dtype::float32);
        check(t.dtype() == isthmus::dtype::float32, "dtype is float32");
        check(t.shape() == isthmus::shape_t{2, 3}, "shape is (2, 3)");
        check(t.numel() == 6, "numel is 6");

        // Fill through the lock protocol, then read back through the tensor API.
        auto* p = static_cast<float*>(t.lock(isthmus::LOCK_WRITE, isthmus::MEMRESOURCE_CPU));
        for (int i = 0; i < 6; ++i) p[i] = static_cast<float>(i) * 1.5f;
        t.unlock(isthmus::LOCK_WRITE, isthmus::MEMRESOURCE_CPU);
        std::cout << "t =\n" << t << "\n";

        const std::vector<float> want{0.0f, 1.5f, 3.0f, 4.5f, 6.0f, 7.5f};
        check(t.to_vector<float>() == want, "values read back");
        check(t.at<float>({1, 2}) == 7.5f, "t[1, 2] == 7.5");

        // A view: the transpose aliases the same storage.
        auto tt = t.t();
        check(tt.shape() == isthmus::shape_t{3, 2}, "transpose shape is (3, 2)");
        check(tt.at<float>({2, 1}) == 7.5f, "t.T[2, 1] == 7.5");
        t.fill(2.0);
        check(tt.at<float>({0, 1}) == 2.0f, "the view sees the fill");

        // Errors cross the shared-library boundary as their own types.
        bool caught = false;
        try {
            (void)t.reshape({4, 4});
        } catch (const isthmus::value_error&) {
            caught = true;
        }
        check(caught, "reshape to a wrong size throws isthmus::value_error");
    } catch (const std::exception& e) {
        std::cerr << "consumer: unexpected exception: " << e.what() << "\n";
        return 2;
    }
    if (failures != 0) return 1;
    std::cout << "consumer: OK\n";
    return 0;
}
