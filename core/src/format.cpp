// NumPy-style text for tensors: aligned columns, shared precision, summarised when large.
#include "cpu/convert.hpp"
#include "isthmus/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace isthmus {

namespace {

constexpr int64_t summarize_above = 1000; // elements; NumPy's threshold
constexpr int64_t edge_items = 3;

// Note [float text]
// ~~~~~~~~~~~~~~~~~
// Floats print as NumPy prints them. Each value gets the fewest digits that read back as the same
// value *in its own dtype* (so float32 0.1 prints "0.1", not "0.10000000149"), capped at 8 (NumPy's
// precision). In an array every value shares one layout (NumPy's FloatingFormat, floatmode
// "maxprec"): scientific when the largest magnitude is >= 1e8, the smallest is < 1e-4, or they
// differ by more than 1e3; otherwise positional with integer parts padded on the left and fractions
// padded with spaces on the right ("[1.  2.5 3. ]"). A 0-d tensor prints like the Python scalar
// ("2.5", "1.0", "1e+20", "(1+2j)").

// True when the decimal text `s` reads back as `x` at the precision of dtype `dt`.
bool round_trips(const char* s, double x, dtype dt) {
    const double y = std::strtod(s, nullptr);
    switch (dt) {
    case dtype::float16:
        return cpu::convert<float16_t>(y).bits == cpu::convert<float16_t>(x).bits;
    case dtype::bfloat16:
        return cpu::convert<bfloat16_t>(y).bits == cpu::convert<bfloat16_t>(x).bits;
    case dtype::float32:
    case dtype::complex64:
        return static_cast<float>(y) == static_cast<float>(x);
    default:
        return y == x;
    }
}

// x printed with the fewest digits (at most max_digits) that round-trip; fmt is "%.*f" or "%.*e".
// Returns the text and the number of digits used.
std::pair<std::string, int> shortest(double x, dtype dt, const char* fmt, int max_digits) {
    char buf[512];
    for (int p = 0; p <= max_digits; ++p) {
        std::snprintf(buf, sizeof buf, fmt, p, x);
        if (round_trips(buf, x, dt)) return {buf, p};
    }
    std::snprintf(buf, sizeof buf, fmt, max_digits, x);
    return {buf, max_digits};
}

// Splits "-1.25e-05" into int part "-1", fraction "25" and exponent digits "-05" (empty when
// positional). The fraction drops trailing zeros.
struct float_parts {
    std::string int_part, frac, exp;
};
float_parts split(const std::string& s) {
    float_parts r;
    std::string mant = s;
    if (auto e = s.find('e'); e != std::string::npos) {
        mant = s.substr(0, e);
        r.exp = s.substr(e + 1);
    }
    auto dot = mant.find('.');
    r.int_part = mant.substr(0, dot);
    if (dot != std::string::npos) r.frac = mant.substr(dot + 1);
    while (!r.frac.empty() && r.frac.back() == '0') r.frac.pop_back();
    return r;
}

// Formats real values with one layout for the whole array, like NumPy's FloatingFormat.
struct real_format {
    dtype dt;
    bool plus; // always print the sign (imaginary parts)
    bool scientific = false;
    size_t pad_left = 0, pad_right = 0, exp_digits = 0;
    int precision = 0; // scientific: digits after the point, shared by all values

    real_format(const std::vector<double>& v, dtype t, bool plus_sign) : dt(t), plus(plus_sign) {
        double max_abs = 0, min_abs = INFINITY;
        for (double x : v)
            if (std::isfinite(x) && x != 0) {
                max_abs = std::max(max_abs, std::fabs(x));
                min_abs = std::min(min_abs, std::fabs(x));
            }
        scientific = max_abs > 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3);
        for (double x : v) {
            if (!std::isfinite(x)) continue;
            float_parts f = split(shortest(x, dt, scientific ? "%.*e" : "%.*f", 8).first);
            if (plus && x >= 0 && !std::signbit(x)) f.int_part.insert(0, "+");
            pad_left = std::max(pad_left, f.int_part.size());
            pad_right = std::max(pad_right, f.frac.size());
            precision = std::max(precision, static_cast<int>(f.frac.size()));
            size_t ed = f.exp.size() - 1; // without the sign
            if (scientific) exp_digits = std::max(exp_digits, ed);
        }
    }
    std::string operator()(double x) const {
        if (std::isnan(x)) return plus ? "+nan" : "nan";
        if (std::isinf(x)) return x > 0 ? (plus ? "+inf" : "inf") : "-inf";
        char buf[512];
        float_parts f;
        if (scientific) {
            std::snprintf(buf, sizeof buf, "%.*e", precision, x);
            f = split(buf);
            f.frac.resize(static_cast<size_t>(precision), '0'); // shared digits, zero padded
        } else {
            f = split(shortest(x, dt, "%.*f", 8).first);
        }
        if (plus && !std::signbit(x)) f.int_part.insert(0, "+");
        std::string s(pad_left > f.int_part.size() ? pad_left - f.int_part.size() : 0, ' ');
        s += f.int_part + "." + f.frac;
        if (scientific) {
            std::string digits = f.exp.substr(1);
            if (digits.size() < exp_digits) digits.insert(0, exp_digits - digits.size(), '0');
            s += "e" + f.exp.substr(0, 1) + digits;
        } else {
            s.append(pad_right - f.frac.size(), ' ');
        }
        return s;
    }
};

// A real value as Python's repr prints a float (shortest round-trip digits in the dtype;
// positional for 1e-4 <= |x| < 1e16 with at least one fractional digit, else "1.5e-05").
// `dot_zero` false drops the ".0" of integral values, as inside Python's complex repr.
std::string python_float(double x, dtype dt, bool dot_zero = true) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    const auto [sci, p] = shortest(x, dt, "%.*e", 17);
    const int e = std::atoi(sci.c_str() + sci.find('e') + 1);
    if (x == 0 || (e >= -4 && e < 16)) {
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.*f", std::max(0, p - e), x);
        std::string s = buf;
        if (s.find('.') == std::string::npos && dot_zero) s += ".0";
        return s;
    }
    float_parts f = split(sci);
    return f.int_part + (f.frac.empty() ? "" : "." + f.frac) + "e" + f.exp;
}

std::string python_complex(complex128_t c, dtype dt) {
    const dtype r = real_dtype(dt);
    std::string im = python_float(c.imag(), r, false);
    if (c.real() == 0 && !std::signbit(c.real())) return im + "j";
    if (im[0] != '-') im.insert(0, "+");
    return "(" + python_float(c.real(), r, false) + im + "j)";
}

struct printer {
    const tensor& t;
    bool summarize;
    std::vector<std::string> cells; // formatted elements in printed order
    size_t width = 0;
    size_t next = 0;

    // Visits the printed elements (skipping the middle of long dimensions when summarising).
    template <typename F>
    void visit(const tensor& v, F&& f) const {
        if (v.dim() == 0) return f(v);
        int64_t n = v.size(0);
        for (int64_t i = 0; i < n; ++i) {
            if (summarize && n > 2 * edge_items && i == edge_items) i = n - edge_items;
            visit(v.select(0, i), f);
        }
    }

    void layout(const tensor& v, std::string& out, int indent) {
        if (v.dim() == 0) {
            const std::string& c = cells[next++];
            out.append(width - c.size(), ' ');
            out += c;
            return;
        }
        out += '[';
        int64_t n = v.size(0);
        for (int64_t i = 0; i < n; ++i) {
            if (i > 0) {
                if (v.dim() == 1) {
                    out += ' ';
                } else {
                    out.append(static_cast<size_t>(v.dim() - 1), '\n');
                    out.append(static_cast<size_t>(indent + 1), ' ');
                }
            }
            if (summarize && n > 2 * edge_items && i == edge_items) {
                out += "...";
                if (v.dim() == 1) {
                    out += ' ';
                } else {
                    out.append(static_cast<size_t>(v.dim() - 1), '\n');
                    out.append(static_cast<size_t>(indent + 1), ' ');
                }
                i = n - edge_items;
            }
            layout(v.select(0, i), out, indent + 1);
        }
        out += ']';
    }
};

} // namespace

std::string tensor::to_string() const {
    if (!defined()) return "<undefined tensor>";
    printer p{*this, numel() > summarize_above, {}, 0, 0};
    if (numel() == 0) return "[]";
    // Gather printed elements as double / complex on the host.
    std::vector<tensor> elems;
    p.visit(*this, [&](const tensor& e) { elems.push_back(e); });
    if (dtype_ == dtype::bool_) {
        for (auto& e : elems) p.cells.push_back(e.item<bool>() ? "True" : "False");
    } else if (is_integer(dtype_)) {
        for (auto& e : elems)
            p.cells.push_back(is_signed_int(dtype_) ? std::to_string(e.item<int64_t>())
                                                    : std::to_string(e.item<uint64_t>()));
    } else if (dim() == 0) {
        // See Note [float text]: a 0-d tensor prints like the Python scalar.
        p.cells.push_back(is_complex(dtype_) ? python_complex(elems[0].item<complex128_t>(), dtype_)
                                             : python_float(elems[0].item<double>(), dtype_));
    } else if (is_complex(dtype_)) {
        std::vector<double> re, im;
        for (auto& e : elems) {
            auto c = e.item<complex128_t>();
            re.push_back(c.real());
            im.push_back(c.imag());
        }
        real_format fr(re, dtype_, false), fi(im, dtype_, true);
        for (size_t i = 0; i < re.size(); ++i) {
            // NumPy puts the "j" before the imaginary part's right padding.
            std::string s = fi(im[i]);
            const size_t end = s.find_last_not_of(' ') + 1;
            s.insert(end, "j");
            p.cells.push_back(fr(re[i]) + s);
        }
    } else {
        std::vector<double> v;
        for (auto& e : elems) v.push_back(e.item<double>());
        real_format f(v, dtype_, false);
        for (double x : v) p.cells.push_back(f(x));
    }
    for (auto& c : p.cells) p.width = std::max(p.width, c.size());
    std::string out;
    p.layout(*this, out, 0);
    return out;
}

} // namespace isthmus
