#include "atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "strata/core/error.hpp"

namespace strata::io {

void write_failed(const std::string& path, int error) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    throw Error("failed writing '" + path + "': " + std::strerror(error) + " (the partial file was removed)");
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp"), removed_on_exit_(tmp_) {
    f_ = std::fopen(tmp_.c_str(), "wb");
    if (!f_) throw Error("cannot open '" + tmp_ + "' for writing: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
    if (!f_) return;
    std::fclose(f_);
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
}

void AtomicFile::write(const void* data, std::size_t bytes) {
    if (bytes && std::fwrite(data, 1, bytes, f_) != bytes)
        throw Error("failed writing '" + tmp_ + "': " + std::strerror(errno));
}

void AtomicFile::commit(bool durable) {
    // fsync before rename: otherwise the rename may reach the disk before the data does.
    if (std::fflush(f_) != 0 || (durable && ::fsync(fileno(f_)) != 0))
        throw Error("failed writing '" + tmp_ + "': " + std::strerror(errno));
    const int closed = std::fclose(f_);
    f_ = nullptr;
    if (closed != 0) throw Error("failed closing '" + tmp_ + "': " + std::strerror(errno));
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) {
        std::filesystem::remove(tmp_, ec);
        throw Error("cannot rename '" + tmp_ + "' to '" + path_ + "': " + ec.message());
    }
}

}  // namespace strata::io
