#pragma once
// The fuzzer's bytes as a file, for the readers that take a path: a memfd (memory only, gone
// with the process), rewritten for each input and opened through /proc/self/fd like any file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace strata::fuzz {

class InputFile {
public:
    InputFile() : fd_(memfd_create("strata-fuzz-input", 0)), path_("/proc/self/fd/" + std::to_string(fd_)) {
        if (fd_ < 0) std::abort();
    }
    // The file now holds `data`; its path.
    const std::string& write(const std::uint8_t* data, std::size_t size) {
        if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != ssize_t(size)) std::abort();
        return path_;
    }

private:
    int fd_;
    std::string path_;
};

}  // namespace strata::fuzz
