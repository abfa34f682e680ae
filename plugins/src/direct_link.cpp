// The quick build's link without the compiler driver: the driver's link line found once, run by
// gold itself against stubs of the runtime libraries (Note [direct links for quick builds]).
#include "direct_link.hpp"

#include "compiler_runs.hpp"
#include "isthmus/error.hpp"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace isthmus::plugin_host {

// Note [direct links for quick builds]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The link was a fifth of a quick build (Note [compile tiers]): the driver's link of the saxpy
// plugin (g++, collect2, ld.gold, on the object, the support object, libstdc++, libm, libgcc_s and
// libc) took 26-36 ms on the 2-core development machine, gold run directly on the same line
// 23-25 ms, and gold run directly with stubs in place of the four runtime libraries 7-9 ms. Most of
// a small plugin's link is reading the runtime libraries' symbol tables (libstdc++ exports some
// 6,000 symbols), which a shared library's link does not need: it may leave symbols undefined, and
// the loader binds them when the plugin loads, in the libraries its DT_NEEDED entries name. So
// the quick build is compiled with -c by the driver and linked by gold against stubs: for each
// runtime library, a shared library with the same SONAME and no symbols (the idea of LLVM's
// interface stubs, less the symbols), written here. What changes in the plugin:
//  - its references carry no symbol version, and the loader binds each to the library's default
//    version, the one a link against the real library records;
//  - every stub is linked with --no-as-needed (a stub satisfies no reference, so --as-needed would
//    drop it), so the plugin needs every runtime library on the driver's line, those of AS_NEEDED
//    groups too (ld.so, libmvec): more than a driver's link records, all of them already loaded
//    in a process that runs isthmus (libmvec is loaded with the first quick build).
// Static archives (libc_nonshared.a, libgcc.a) and the crt objects are linked as the driver links
// them. The line comes from the driver itself, once per process and driver (`<driver> <fixed
// flags> -### <support object> -o probe.so`), and is used only when the linker is gold (chosen
// where it exists: Note [gold for plugin links]), whose reading of the stubs is what was tested;
// the LTO plugin's options are dropped (a quick build's flags are tierable: never -flto). A library
// or linker script not understood here is linked as the driver links it. The stubs live in a
// private directory of the process under $TMPDIR, removed at exit. A direct link that fails is run
// again by the driver, whose output a failure reports, and the line is found again next time.
// The quick build's key records the direct link (`link direct`), so ISTHMUS_DIRECT_LINK=0, which
// turns it off, never loads a directly linked entry. Measured on the saxpy kernel (A/B alternating
// processes): the quick build's compiler commands 109-114 -> 93-94 ms.

namespace {

constexpr const char* k_objects = "\x01objects";
constexpr const char* k_output = "\x01output";
constexpr const char* k_probe_output = "/isthmus-direct-link-probe/probe.so";

struct direct_links {
    std::mutex mu;
    std::map<std::string, std::optional<direct_link>> plans; // by the driver's words
    fs::path stubs;                                          // the stub directory ("": none yet)
    pid_t owner = 0;                                         // the process that made it
    ~direct_links() {
        std::error_code ec;
        if (!stubs.empty() && owner == ::getpid()) fs::remove_all(stubs, ec);
    }
};

direct_links& links() {
    static direct_links s;
    return s;
}

std::string driver_key(const std::vector<std::string>& driver) {
    std::string k;
    for (const auto& w : driver) k += w + '\x1f';
    return k;
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

// The stub for the runtime library `lib` (with `soname`) in the stub directory, made on first use.
std::optional<std::string> stub_for(direct_links& s, const fs::path& lib,
                                    const std::string& soname) {
    std::error_code ec;
    if (s.stubs.empty() || !fs::is_directory(s.stubs, ec)) {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = (fs::path(tmp && *tmp ? tmp : "/tmp") / "isthmus-link-XXXXXX").string();
        if (::mkdtemp(templ.data()) == nullptr) return std::nullopt;
        s.stubs = templ;
        s.owner = ::getpid();
    }
    std::string file = soname;
    for (char& c : file)
        if (c == '/') c = '_';
    const fs::path out = s.stubs / file;
    if (!fs::exists(out, ec) && !detail::write_stub_library(out, soname, lib)) return std::nullopt;
    return out.string();
}

// The file `file` in the first of the search directories that has it.
std::optional<fs::path> find_in_dirs(const std::vector<std::string>& dirs, const fs::path& file) {
    std::error_code ec;
    for (const auto& d : dirs)
        if (fs::is_regular_file(fs::path(d) / file, ec)) return fs::path(d) / file;
    return std::nullopt;
}

// The words that link the shared library `lib` against its stub (with --no-as-needed, then the
// mode the line was in), appended to `out`; false when `lib` is none.
bool link_stub(direct_links& s, const fs::path& lib, bool as_needed,
               std::vector<std::string>& out) {
    const auto soname = detail::elf_soname(lib);
    if (!soname) return false;
    const auto stub = stub_for(s, lib, *soname);
    if (!stub) return false;
    out.push_back("--no-as-needed");
    out.push_back(*stub);
    if (as_needed) out.push_back("--as-needed");
    return true;
}

// The words that replace a linker script's `-l` (libc.so, libm.so, libgcc_s.so are scripts on
// glibc systems): its GROUP and INPUT files, shared libraries as stubs, archives and -l as they
// are; nullopt when the script holds anything else.
std::optional<std::vector<std::string>> script_words(direct_links& s, const fs::path& script,
                                                     const std::vector<std::string>& dirs,
                                                     bool as_needed) {
    std::string text = read_file(script);
    if (text.empty() || text.find('\0') != std::string::npos) return std::nullopt;
    for (size_t a; (a = text.find("/*")) != std::string::npos;) {
        const size_t b = text.find("*/", a + 2);
        if (b == std::string::npos) return std::nullopt;
        text.replace(a, b + 2 - a, " ");
    }
    std::vector<std::string> tokens;
    std::string cur;
    for (char c : text) {
        if (c == '(' || c == ')' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
            if (!cur.empty()) tokens.push_back(std::move(cur));
            cur.clear();
            if (c == '(' || c == ')') tokens.emplace_back(1, c);
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) tokens.push_back(cur);
    std::vector<std::string> out;
    auto file = [&](const std::string& t) {
        if (starts_with(t, "-l")) {
            out.push_back(t);
            return true;
        }
        fs::path p = t;
        std::error_code ec;
        if (p.is_relative()) { // beside the script, else where -l looks
            auto found = find_in_dirs({script.parent_path().string()}, p);
            if (!found) found = find_in_dirs(dirs, p);
            if (!found) return false;
            p = *found;
        }
        if (link_stub(s, p, as_needed, out)) return true;
        if (p.extension() == ".a" && fs::is_regular_file(p, ec)) {
            out.push_back(p.string());
            return true;
        }
        return false;
    };
    size_t i = 0;
    auto expect = [&](const char* t) { return i < tokens.size() && tokens[i++] == t; };
    while (i < tokens.size()) {
        const std::string kw = tokens[i++];
        if (kw == "OUTPUT_FORMAT") {
            if (!expect("(")) return std::nullopt;
            while (i < tokens.size() && tokens[i] != ")") ++i;
            if (!expect(")")) return std::nullopt;
        } else if (kw == "GROUP" || kw == "INPUT") {
            if (!expect("(")) return std::nullopt;
            out.push_back("--start-group");
            while (i < tokens.size() && tokens[i] != ")") {
                const std::string t = tokens[i++];
                if (t == "AS_NEEDED") { // See Note [direct links for quick builds]
                    if (!expect("(")) return std::nullopt;
                    while (i < tokens.size() && tokens[i] != ")")
                        if (!file(tokens[i++])) return std::nullopt;
                    if (!expect(")")) return std::nullopt;
                } else if (t == "(" || !file(t)) {
                    return std::nullopt;
                }
            }
            if (!expect(")")) return std::nullopt;
            out.push_back("--end-group");
        } else {
            return std::nullopt;
        }
    }
    return out;
}

// The direct link made of the driver's link line `w` (See Note [direct links for quick builds]).
std::optional<direct_link> plan_from_line(direct_links& s, const std::vector<std::string>& w,
                                          const std::string& object) {
    if (w.empty()) return std::nullopt;
    const std::string base = fs::path(w[0]).filename().string();
    direct_link l;
    if (base == "collect2") {
        bool gold = false;
        for (const auto& a : w) gold = gold || a == "-fuse-ld=gold";
        const std::string ld = gold ? find_in_path("ld.gold") : "";
        if (ld.empty()) return std::nullopt;
        l.words.push_back(ld);
    } else if (starts_with(base, "ld.gold")) {
        l.words.push_back(w[0]);
    } else {
        return std::nullopt;
    }
    std::vector<std::string> dirs; // the -L search directories, in order
    for (size_t i = 1; i < w.size(); ++i) {
        if (w[i] == "-L" && i + 1 < w.size()) dirs.push_back(w[i + 1]);
        if (starts_with(w[i], "-L") && w[i].size() > 2) dirs.push_back(w[i].substr(2));
    }
    bool as_needed = false, dynamic = true, objects = false, output = false;
    for (size_t i = 1; i < w.size(); ++i) {
        const std::string& a = w[i];
        if (a == "-plugin") {
            ++i;
        } else if (starts_with(a, "-plugin-opt=") || starts_with(a, "-fuse-ld=")) {
        } else if (a == object && !objects) {
            l.words.push_back(k_objects);
            objects = true;
        } else if (a == "-o" && i + 1 < w.size() && w[i + 1] == k_probe_output) {
            l.words.push_back("-o");
            l.words.push_back(k_output);
            output = true;
            ++i;
        } else if (starts_with(a, "-l") && dynamic) {
            std::string name = a.substr(2);
            if (name.empty() && i + 1 < w.size()) name = w[++i];
            const auto lib = find_in_dirs(dirs, "lib" + name + ".so"); // what -l`name` names
            bool done = false;
            if (lib) {
                if (link_stub(s, *lib, as_needed, l.words)) {
                    done = true;
                } else if (auto sw = script_words(s, *lib, dirs, as_needed)) {
                    l.words.insert(l.words.end(), sw->begin(), sw->end());
                    done = true;
                }
            }
            if (!done) l.words.push_back("-l" + name); // linked as the driver links it
        } else {
            if (a == "--as-needed") as_needed = true;
            if (a == "--no-as-needed") as_needed = false;
            if (a == "-Bstatic" || a == "-static" || a == "-Bnon_shared") dynamic = false;
            if (a == "-Bdynamic" || a == "-Bshareable" || a == "-Bcall_shared") dynamic = true;
            l.words.push_back(a);
        }
    }
    if (!objects || !output) return std::nullopt;
    return l;
}

} // namespace

bool direct_links_enabled() {
    return !switched_off("ISTHMUS_DIRECT_LINK");
}

std::optional<std::optional<direct_link>>
known_direct_link(const std::vector<std::string>& driver) {
    direct_links& s = links();
    std::lock_guard lk(s.mu);
    const auto it = s.plans.find(driver_key(driver));
    if (it == s.plans.end()) return std::nullopt;
    std::error_code ec;
    if (it->second && !fs::is_directory(s.stubs, ec)) { // $TMPDIR was cleaned: looked for again
        s.plans.erase(it);
        return std::nullopt;
    }
    return it->second;
}

std::vector<std::string> direct_link_probe(const std::vector<std::string>& driver,
                                           const std::string& object) {
    std::vector<std::string> argv = driver;
    for (const std::string& a :
         {std::string("-###"), object, std::string("-o"), std::string(k_probe_output)})
        argv.push_back(a);
    return argv;
}

std::optional<direct_link> direct_link_from_probe(const std::vector<std::string>& driver,
                                                  const std::string& object,
                                                  const std::string& output, int status) {
    direct_links& s = links();
    std::lock_guard lk(s.mu);
    std::optional<direct_link> plan;
    if (status == 0) {
        std::istringstream is(output);
        for (std::string line; std::getline(is, line);) {
            if (line.empty() || line[0] != ' ') continue; // the commands are indented by one space
            const auto words = detail::driver_words(line);
            bool links = false;
            for (const auto& wd : words) links = links || wd == k_probe_output;
            if (links && !words.empty() && fs::path(words[0]).filename() != "cc1plus")
                plan = plan_from_line(s, words, object);
        }
    }
    s.plans[driver_key(driver)] = plan;
    return plan;
}

void forget_direct_link(const std::vector<std::string>& driver) {
    direct_links& s = links();
    std::lock_guard lk(s.mu);
    s.plans.erase(driver_key(driver));
}

std::vector<std::string> direct_link_command(const direct_link& l,
                                             const std::vector<std::string>& objects,
                                             const fs::path& out) {
    std::vector<std::string> argv;
    for (const auto& w : l.words) {
        if (w == k_objects)
            argv.insert(argv.end(), objects.begin(), objects.end());
        else if (w == k_output)
            argv.push_back(out.string());
        else
            argv.push_back(w);
    }
    return argv;
}

namespace detail {

std::vector<std::string> driver_words(const std::string& line) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        if (i == line.size()) break;
        std::string w;
        while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) {
            if (line[i] == '"') {
                for (++i; i < line.size() && line[i] != '"'; ++i) {
                    if (line[i] == '\\' && i + 1 < line.size()) ++i;
                    w += line[i];
                }
                ++i; // the closing quote
            } else {
                w += line[i++];
            }
        }
        words.push_back(std::move(w));
    }
    return words;
}

namespace {

// The ELF header of `bytes` when it is a 64-bit little-endian shared library on this
// (little-endian) machine.
const Elf64_Ehdr* dso_header(const std::string& bytes) {
    if constexpr (std::endian::native != std::endian::little) return nullptr;
    if (bytes.size() < sizeof(Elf64_Ehdr)) return nullptr;
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(bytes.data());
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_type != ET_DYN)
        return nullptr;
    return eh;
}

} // namespace

std::optional<std::string> elf_soname(const fs::path& lib) {
    // Only the header, the section headers, .dynamic and its string table are read: a runtime
    // library is megabytes.
    std::ifstream f(lib, std::ios::binary);
    auto read_at = [&](uint64_t at, uint64_t n) -> std::optional<std::string> {
        if (n > (uint64_t{1} << 24)) return std::nullopt;
        std::string out(n, '\0');
        f.clear();
        f.seekg(static_cast<std::streamoff>(at));
        if (!f.read(out.data(), static_cast<std::streamsize>(n))) return std::nullopt;
        return out;
    };
    const auto head = read_at(0, sizeof(Elf64_Ehdr));
    const Elf64_Ehdr* eh = head ? dso_header(*head) : nullptr;
    if (!eh || eh->e_shentsize != sizeof(Elf64_Shdr)) return std::nullopt;
    const auto table = read_at(eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr));
    if (!table) return std::nullopt;
    std::vector<Elf64_Shdr> sh(eh->e_shnum);
    std::memcpy(sh.data(), table->data(), table->size());
    for (const auto& dynamic : sh) {
        if (dynamic.sh_type != SHT_DYNAMIC || dynamic.sh_link >= sh.size()) continue;
        const Elf64_Shdr& strtab = sh[dynamic.sh_link];
        const auto dyn = read_at(dynamic.sh_offset, dynamic.sh_size);
        if (!dyn) return std::nullopt;
        for (size_t k = 0; k + 1 <= dyn->size() / sizeof(Elf64_Dyn); ++k) {
            Elf64_Dyn d;
            std::memcpy(&d, dyn->data() + k * sizeof(Elf64_Dyn), sizeof d);
            if (d.d_tag == DT_NULL) break;
            if (d.d_tag != DT_SONAME || d.d_un.d_val >= strtab.sh_size) continue;
            const auto name = read_at(strtab.sh_offset + d.d_un.d_val,
                                      std::min<uint64_t>(strtab.sh_size - d.d_un.d_val, 4096));
            if (!name) return std::nullopt;
            const size_t len = name->find('\0');
            if (len == 0 || len == std::string::npos) return std::nullopt;
            return name->substr(0, len);
        }
    }
    return std::nullopt;
}

bool write_stub_library(const fs::path& out, const std::string& soname, const fs::path& like) {
    std::string head(sizeof(Elf64_Ehdr), '\0');
    {
        std::ifstream f(like, std::ios::binary);
        if (!f.read(head.data(), static_cast<std::streamsize>(head.size()))) return false;
    }
    const Elf64_Ehdr* model = dso_header(head);
    if (!model || soname.empty() || soname.find('\0') != std::string::npos) return false;
    // The layout: header, two program headers, .dynsym (the null symbol), .dynstr, .dynamic,
    // .shstrtab, then the five section headers; addresses equal file offsets.
    auto align8 = [](size_t n) { return (n + 7) & ~size_t{7}; };
    const size_t phoff = sizeof(Elf64_Ehdr);
    const size_t dynsym = phoff + 2 * sizeof(Elf64_Phdr);
    const size_t dynstr = dynsym + sizeof(Elf64_Sym);
    const std::string strings = std::string(1, '\0') + soname + '\0';
    const size_t dynamic = align8(dynstr + strings.size());
    const Elf64_Dyn dyn[] = {{DT_SONAME, {1}},
                             {DT_STRTAB, {dynstr}},
                             {DT_SYMTAB, {dynsym}},
                             {DT_STRSZ, {strings.size()}},
                             {DT_SYMENT, {sizeof(Elf64_Sym)}},
                             {DT_NULL, {0}}};
    const size_t shstr = dynamic + sizeof dyn;
    const std::string names = std::string("\0.dynsym\0.dynstr\0.dynamic\0.shstrtab\0", 35);
    const size_t shoff = align8(shstr + names.size());
    std::string bytes(shoff + 5 * sizeof(Elf64_Shdr), '\0');
    auto put = [&](size_t at, const void* p, size_t n) { std::memcpy(bytes.data() + at, p, n); };

    Elf64_Ehdr eh{};
    std::memcpy(eh.e_ident, model->e_ident, EI_NIDENT);
    eh.e_type = ET_DYN;
    eh.e_machine = model->e_machine;
    eh.e_version = EV_CURRENT;
    eh.e_flags = model->e_flags;
    eh.e_phoff = phoff;
    eh.e_shoff = shoff;
    eh.e_ehsize = sizeof(Elf64_Ehdr);
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = 2;
    eh.e_shentsize = sizeof(Elf64_Shdr);
    eh.e_shnum = 5;
    eh.e_shstrndx = 4;
    put(0, &eh, sizeof eh);
    Elf64_Phdr load{};
    load.p_type = PT_LOAD;
    load.p_flags = PF_R;
    load.p_filesz = load.p_memsz = shstr;
    load.p_align = 0x1000;
    Elf64_Phdr dynseg{};
    dynseg.p_type = PT_DYNAMIC;
    dynseg.p_flags = PF_R;
    dynseg.p_offset = dynseg.p_vaddr = dynseg.p_paddr = dynamic;
    dynseg.p_filesz = dynseg.p_memsz = sizeof dyn;
    dynseg.p_align = 8;
    put(phoff, &load, sizeof load);
    put(phoff + sizeof load, &dynseg, sizeof dynseg);
    put(dynstr, strings.data(), strings.size());
    put(dynamic, dyn, sizeof dyn);
    put(shstr, names.data(), names.size());

    Elf64_Shdr sh[5]{};
    auto section = [&](Elf64_Shdr& s, uint32_t name, uint32_t type, uint64_t flags, size_t at,
                       size_t size, uint32_t link, uint32_t info, uint64_t align,
                       uint64_t entsize) {
        s.sh_name = name;
        s.sh_type = type;
        s.sh_flags = flags;
        s.sh_addr = (flags & SHF_ALLOC) ? at : 0;
        s.sh_offset = at;
        s.sh_size = size;
        s.sh_link = link;
        s.sh_info = info;
        s.sh_addralign = align;
        s.sh_entsize = entsize;
    };
    section(sh[1], 1, SHT_DYNSYM, SHF_ALLOC, dynsym, sizeof(Elf64_Sym), 2, 1, 8, sizeof(Elf64_Sym));
    section(sh[2], 9, SHT_STRTAB, SHF_ALLOC, dynstr, strings.size(), 0, 0, 1, 0);
    section(sh[3], 17, SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, dynamic, sizeof dyn, 2, 0, 8,
            sizeof(Elf64_Dyn));
    section(sh[4], 26, SHT_STRTAB, 0, shstr, names.size(), 0, 0, 1, 0);
    put(shoff, sh, sizeof sh);

    try {
        write_atomically(out, bytes);
    } catch (const isthmus::error&) {
        return false;
    }
    return true;
}

} // namespace detail

} // namespace isthmus::plugin_host
