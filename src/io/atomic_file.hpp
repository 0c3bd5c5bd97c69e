#pragma once
// A file that appears under its name only once it is complete: bytes go to NAME.tmp, which is
// flushed, fsync'ed and renamed over NAME on commit(). A crash (or an exception) mid-write leaves
// the previous NAME untouched; an uncommitted temporary is removed.
#include <cstdio>
#include <string>

#include "strata/core/interrupt.hpp"

namespace strata::io {

// A write to `path` failed with `error` (errno): removes the partial file and throws Error
// "failed writing 'PATH': No space left on device (the partial file was removed)".
[[noreturn]] void write_failed(const std::string& path, int error);

class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* data, std::size_t bytes);
    void write(const std::string& s) { write(s.data(), s.size()); }
    // `durable`: fsync before the rename, so the new content survives a power loss, not only a
    // crash of this process.
    void commit(bool durable = true);

private:
    std::string path_, tmp_;
    std::FILE* f_ = nullptr;
    ExitRemoves removed_on_exit_;  // an insisted Ctrl-C (interrupt.hpp) leaves no .tmp behind
};

}  // namespace strata::io
