"""Generic kernels the derived-kernel tests share (C++ text for compile_string): the PyQuasar
manual's color_temperature written over its element type, and a clamped 3x3 stencil whose
value is a nonlinear function of its weighted sum."""

GENERIC_KERNELS = r"""
// The PyQuasar manual's color_temperature, written over its element type.
template <typename T>
static ip::vec<T, 3> lerp(ip::vec<T, 3> a, ip::vec<T, 3> b, T c) {
    return a * c + b * (T(1) - c);
}
template <typename T>
struct color_temperature {
    void operator()(ip::view<const T, 3> x, ip::view<T, 3> y, T temp, ip::vec<T, 3> cold,
                    ip::vec<T, 3> hot, ip::ivec2 pos) const {
        const ip::vec<T, 3> input = x.template load<3>(pos[0], pos[1], 0);
        const ip::vec<T, 3> output = temp < 0 ? lerp(input, cold, T(-0.25) * temp)
                                              : lerp(input, hot, T(0.25) * temp);
        y.store(output, pos[0], pos[1], 0);
    }
};

template <typename T>
struct blur {
    void operator()(ip::view<const T, 2, ip::access::clamped> x, ip::view<T, 2> y, T s,
                    ip::ivec2 p) const {
        T acc = 0;
        for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj) acc += T(3 * di + dj + 5) * x(p[0] + di, p[1] + dj);
        y(p[0], p[1]) = s * acc * acc / (T(1) + acc * acc);
    }
};
"""
