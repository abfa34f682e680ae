// NumPy-style text for tensors: aligned columns, shared precision, summarised when large.
#include "isthmus/tensor.hpp"

#include <cmath>
#include <complex>
#include <cstdio>
#include <string>

namespace isthmus {

namespace {

constexpr int64_t summarize_above = 1000; // elements; NumPy's threshold
constexpr int64_t edge_items = 3;

std::string trim_zeros(std::string s) {
    auto dot = s.find('.');
    if (dot == std::string::npos) return s;
    size_t end = s.size();
    while (end > dot + 1 && s[end - 1] == '0') --end;
    return s.substr(0, end);
}

// Formats real values with one policy for the whole array, like NumPy's FloatingFormat.
struct real_format {
    bool scientific = false;
    int decimals = 0;

    explicit real_format(const std::vector<double>& v) {
        double max_abs = 0, min_abs = INFINITY;
        for (double x : v)
            if (std::isfinite(x) && x != 0) {
                max_abs = std::max(max_abs, std::fabs(x));
                min_abs = std::min(min_abs, std::fabs(x));
            }
        scientific = max_abs >= 1e16 || (min_abs < 1e-4 && max_abs > 0) ||
                     (max_abs > 0 && max_abs / min_abs > 1e3 && min_abs < 1e-3);
        for (double x : v) {
            if (!std::isfinite(x)) continue;
            char buf[64];
            std::snprintf(buf, sizeof buf, scientific ? "%.8e" : "%.8f", x);
            std::string s(buf);
            std::string mant = scientific ? s.substr(0, s.find('e')) : s;
            mant = trim_zeros(mant);
            auto dot = mant.find('.');
            int d = dot == std::string::npos ? 0 : static_cast<int>(mant.size() - dot - 1);
            decimals = std::max(decimals, d);
        }
    }
    std::string operator()(double x) const {
        if (std::isnan(x)) return "nan";
        if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
        char buf[64];
        std::snprintf(buf, sizeof buf, scientific ? "%.*e" : "%.*f", decimals, x);
        std::string s(buf);
        if (decimals == 0) {
            auto e = s.find('e');
            if (e == std::string::npos) s += '.';
            else s.insert(e, ".");
        }
        return s;
    }
};

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
    } else if (is_complex(dtype_)) {
        std::vector<double> re, im;
        for (auto& e : elems) {
            auto c = e.item<complex128_t>();
            re.push_back(c.real());
            im.push_back(c.imag());
        }
        real_format fr(re), fi(im);
        for (size_t i = 0; i < re.size(); ++i) {
            std::string s = fi(im[i]);
            if (s[0] != '-') s = "+" + s;
            p.cells.push_back(fr(re[i]) + s + "j");
        }
    } else {
        std::vector<double> v;
        for (auto& e : elems) v.push_back(e.item<double>());
        real_format f(v);
        for (double x : v) p.cells.push_back(f(x));
    }
    for (auto& c : p.cells) p.width = std::max(p.width, c.size());
    std::string out;
    p.layout(*this, out, 0);
    return out;
}

} // namespace isthmus
