// The Quasar type-name parser: text -> type_desc, with errors that name the position.
#include "isthmus/types.hpp"

#include "isthmus/error.hpp"

#include <array>
#include <cstdio>

namespace isthmus {
namespace {

// Note [parser shape]
// ~~~~~~~~~~~~~~~~~~~
// A hand-written recursive-descent parser over the raw characters. The grammar is tiny
// (docs/types.md), so a separate lexer would only add code; instead the few token shapes
// (identifier, number, `??`, single punctuation) are read where they are expected, and every error
// reports the byte offset where the expected token should start. Whitespace may surround any token
// but never splits one (`? ?` and `ve c` are errors).

// Cells nest recursively; a bound keeps a hostile name ("vec[vec[vec[...") from exhausting
// the stack. Real types nest a few levels at most.
constexpr int max_nesting = 64;

constexpr std::string_view modifier_list = "clamped, circular, mirror, checked or unchecked";

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_ident_char(char c) {
    return is_alpha(c) || is_digit(c);
}

// Appends `c` to `out`, escaping quotes, backslashes and non-printable bytes, so a message
// built from hostile input stays on one line.
void append_escaped(std::string& out, char c) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
        out += "\\\"";
        return;
    case '\\':
        out += "\\\\";
        return;
    case '\n':
        out += "\\n";
        return;
    case '\t':
        out += "\\t";
        return;
    case '\r':
        out += "\\r";
        return;
    default:
        break;
    }
    if (u < 0x20 || u >= 0x7f) {
        std::array<char, 5> buf{};
        std::snprintf(buf.data(), buf.size(), "\\x%02x", static_cast<unsigned>(u));
        out += buf.data();
    } else {
        out += c;
    }
}

std::string escaped(std::string_view s) {
    std::string out;
    for (char c : s) append_escaped(out, c);
    return out;
}

// What a container identifier (`vec`, `cmat`, `icube`, `vec3`, ...) stands for.
struct container_info {
    dtype_family family = dtype_family::real;
    int rank = 0;       // 1, 2 or 3
    int64_t length = 0; // vecL: L; else 0
    bool ok = false;
};

// Splits "[c|i](vec|mat|cube)" and "[c|i]vec(2|3|4)".
container_info classify_container(std::string_view id) {
    container_info info;
    if (!id.empty() && (id[0] == 'c' || id[0] == 'i') && id != "cube") {
        info.family = id[0] == 'c' ? dtype_family::complex : dtype_family::integer;
        id.remove_prefix(1);
    }
    if (id == "vec")
        info.rank = 1;
    else if (id == "mat")
        info.rank = 2;
    else if (id == "cube")
        info.rank = 3;
    else if (id.size() == 4 && id.substr(0, 3) == "vec" && id[3] >= '2' && id[3] <= '4') {
        info.rank = 1;
        info.length = id[3] - '0';
    } else {
        return info;
    }
    info.ok = true;
    return info;
}

// The scalar types named by a single identifier, or nullopt.
std::optional<type_desc> scalar_named(std::string_view id) {
    if (id == "scalar") return type_desc::scalar_type(dtype_family::real);
    if (id == "cscalar") return type_desc::scalar_type(dtype_family::complex);
    if (id == "int") return type_desc::scalar_type(dtype_family::integer);
    // Exact dtypes use NumPy's names, the same that name(dtype) prints: bool, int8..uint64,
    // float16, bfloat16, float32, float64, complex64, complex128. NumPy-style aliases ("float",
    // "double") are deliberately not type names: Quasar has none of them.
    for (int i = 0; i < dtype_count; ++i) {
        auto dt = static_cast<dtype>(i);
        if (name(dt) == id) return type_desc::scalar_type(dtype_family::exact, dt);
    }
    return std::nullopt;
}

std::optional<access_modifier> modifier_named(std::string_view id) {
    for (auto m : {access_modifier::clamped, access_modifier::circular, access_modifier::mirror,
                   access_modifier::checked, access_modifier::unchecked})
        if (name(m) == id) return m;
    return std::nullopt;
}

class type_parser {
public:
    explicit type_parser(std::string_view src) : src_(src) {}

    type_desc parse() {
        type_desc t = parse_type_at(0);
        skip_ws();
        if (!at_end()) fail_expected("end of type name");
        return t;
    }

private:
    std::string_view src_;
    size_t pos_ = 0;

    bool at_end() const { return pos_ >= src_.size(); }
    char peek() const { return at_end() ? '\0' : src_[pos_]; }
    void skip_ws() {
        while (!at_end() && is_space(src_[pos_])) ++pos_;
    }

    // Reads [A-Za-z_][A-Za-z0-9_]* at pos_ (the caller checked the first character).
    std::string_view read_identifier() {
        size_t start = pos_;
        while (!at_end() && is_ident_char(src_[pos_])) ++pos_;
        return src_.substr(start, pos_ - start);
    }

    // The token at `pos` as quoted text for "but found ..." ("'mat'", "'}'", "\"'\"").
    std::string found_at(size_t pos) const {
        auto run = [&](auto pred) {
            size_t end = pos;
            while (end < src_.size() && pred(src_[end])) ++end;
            return src_.substr(pos, end - pos);
        };
        char c = src_[pos];
        std::string_view tok;
        if (is_ident_char(c))
            tok = run(is_ident_char);
        else
            tok = src_.substr(pos, 1);
        if (tok == "'") return "\"'\"";
        return "'" + escaped(tok) + "'";
    }

    [[noreturn]] void fail(size_t pos, std::string_view what) const {
        ISTHMUS_THROW(value_error, "malformed type name \"", escaped(src_), "\": ", what,
                      " at position ", pos);
    }

    // "expected X at position N" at the end of the input, "expected X but found 'y' at
    // position N" elsewhere.
    [[noreturn]] void fail_expected(std::string_view expected) const {
        if (at_end()) fail(pos_, detail::concat("expected ", expected));
        fail(pos_, detail::concat("expected ", expected, " but found ", found_at(pos_)));
    }

    // type := '??' | scalar-name | 'string' | container suffixes
    type_desc parse_type_at(int depth) {
        skip_ws();
        size_t start = pos_;
        if (at_end()) fail_expected("a type name");
        if (peek() == '?') {
            if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '?') {
                pos_ += 2;
                reject_suffixes("??");
                return type_desc::any_type();
            }
            fail_expected("'?"
                          "?'"); // split: "??'" would be a trigraph
        }
        if (!is_alpha(peek())) fail_expected("a type name");

        std::string_view id = read_identifier();
        if (auto t = scalar_named(id)) {
            reject_suffixes(id);
            return *t;
        }
        if (id == "string") {
            reject_suffixes(id);
            return type_desc::string_type();
        }
        container_info info = classify_container(id);
        if (!info.ok)
            fail(start, detail::concat("unknown type '", escaped(id),
                                       "' (expected a type name such as scalar, int, cscalar, "
                                       "vec, mat, cube, cube{N}, ivec, cvec3, string or ?"
                                       "?)"));
        return parse_container_suffixes(id, info, depth);
    }

    // container := name ['{' (N | ':') '}'] ( '[' type ']' | ["'" modifier] )
    type_desc parse_container_suffixes(std::string_view id, const container_info& info, int depth) {
        int rank = info.rank;
        bool is_cube = info.rank == 3 && info.length == 0;
        skip_ws();
        if (peek() == '{') {
            if (!is_cube)
                fail(pos_, detail::concat("unexpected '{' after '", id,
                                          "' (a rank {N} only follows cube, ccube and icube)"));
            ++pos_;
            rank = parse_rank();
            skip_ws();
        }
        if (peek() == '[') {
            if (info.family != dtype_family::real || info.length != 0)
                fail(pos_, detail::concat("unexpected '[' after '", id,
                                          "' (an element type [T] only follows vec, mat, cube "
                                          "and cube{N})"));
            if (depth + 1 > max_nesting)
                fail(pos_,
                     detail::concat("cell types nested deeper than ", max_nesting, " levels"));
            ++pos_;
            type_desc element = parse_type_at(depth + 1);
            skip_ws();
            if (peek() != ']') fail_expected("']'");
            ++pos_;
            skip_ws();
            if (peek() == '\'')
                fail(pos_, "unexpected \"'\" after a cell type (access modifiers only follow "
                           "tensor types such as vec, mat and cube)");
            return type_desc::cell_type(rank, std::move(element));
        }
        access_modifier modifier = access_modifier::none;
        if (peek() == '\'') {
            ++pos_;
            skip_ws();
            size_t mod_pos = pos_;
            std::optional<access_modifier> m;
            if (is_alpha(peek())) m = modifier_named(read_identifier());
            if (!m) {
                pos_ = mod_pos;
                fail_expected(detail::concat("an access modifier (", modifier_list, ")"));
            }
            modifier = *m;
        }
        if (info.length != 0)
            return type_desc::fixed_vector_type(info.family, info.length, modifier);
        return type_desc::tensor_type(info.family, rank, modifier);
    }

    // After '{': (N | ':') '}' where 1 <= N <= max_rank. Returns the rank or any_rank.
    int parse_rank() {
        skip_ws();
        const std::string expected = detail::concat("a rank from 1 to ", max_rank, " or ':'");
        int rank = type_desc::any_rank;
        if (peek() == ':') {
            ++pos_;
        } else if (is_digit(peek())) {
            size_t start = pos_;
            while (!at_end() && is_digit(src_[pos_])) ++pos_;
            std::string_view digits = src_.substr(start, pos_ - start);
            // Compare as text first, so 99999999999999999999 cannot overflow.
            bool in_range = digits.size() <= 3;
            if (in_range) {
                rank = 0;
                for (char c : digits) rank = rank * 10 + (c - '0');
                in_range = rank >= 1 && rank <= max_rank;
            }
            if (!in_range)
                fail(start, detail::concat("expected ", expected, " but found '", digits, "'"));
        } else {
            fail_expected(expected);
        }
        skip_ws();
        if (peek() != '}') fail_expected("'}'");
        ++pos_;
        return rank;
    }

    // `??`, scalar and string types take no suffix; name the misuse instead of reporting
    // "trailing characters".
    void reject_suffixes(std::string_view id) {
        skip_ws();
        switch (peek()) {
        case '\'':
            fail(pos_, detail::concat("unexpected \"'\" after '", escaped(id),
                                      "' (access modifiers only follow tensor types such as vec, "
                                      "mat and cube)"));
        case '[':
            fail(pos_, detail::concat("unexpected '[' after '", escaped(id),
                                      "' (an element type [T] only follows vec, mat, cube and "
                                      "cube{N})"));
        case '{':
            fail(pos_, detail::concat("unexpected '{' after '", escaped(id),
                                      "' (a rank {N} only follows cube, ccube and icube)"));
        default:
            break;
        }
    }
};

} // namespace

type_desc parse_type(std::string_view name) {
    return type_parser(name).parse();
}

} // namespace isthmus
