#include "atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "strata/core/error.hpp"

namespace strata::io {

void write_failed(const std::string& path, int error) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    throw Error("failed writing '" + path + "': " + std::strerror(error) + " (the partial file was removed)");
}

void require_replaceable(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status s = fs::status(path, ec);
    if (ec || !fs::exists(s) || fs::is_regular_file(s)) return;
    if (fs::is_directory(s))
        throw UsageError("'" + path + "' is a folder: name a file (e.g. " +
                         (fs::path(path) / "run.chk").string() + ")");
    throw UsageError("'" + path +
                     "' is not a regular file (a device, a pipe or a socket): strata writes a file beside " +
                     "it and renames it over it, which would replace it; name a regular file");
}

void AtomicFile::Free::operator()(unsigned char* p) const { std::free(p); }

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp"), removed_on_exit_(tmp_) {
    require_replaceable(path_);
    const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    fd_ = ::open(tmp_.c_str(), flags | O_DIRECT, 0644);
    direct_ = fd_ >= 0;
    if (fd_ < 0 && errno == EINVAL)
        fd_ = ::open(tmp_.c_str(), flags, 0644);  // no O_DIRECT on this file system
    if (fd_ < 0) throw Error("cannot open '" + tmp_ + "' for writing: " + std::strerror(errno));
    buffer_.reset(static_cast<unsigned char*>(std::aligned_alloc(kAlign, kPiece)));
    if (!buffer_) {
        ::close(fd_);
        fd_ = -1;
        std::error_code ec;
        std::filesystem::remove(tmp_, ec);
        throw Error("cannot allocate the " + std::to_string(kPiece >> 20) + " MiB buffer for writing '" +
                    tmp_ + "'");
    }
}

AtomicFile::~AtomicFile() {
    if (fd_ < 0) return;
    ::close(fd_);
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
}

void AtomicFile::put(std::size_t bytes) {
    for (std::size_t done = 0; done < bytes;) {
        const ssize_t n = ::write(fd_, buffer_.get() + done, bytes - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL && direct_ && done == 0) {
            // Opened with O_DIRECT, refused at the write (some file systems): the page cache then.
            if (::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_DIRECT) == 0) {
                direct_ = false;
                continue;
            }
        }
        if (n <= 0) throw Error("failed writing '" + tmp_ + "': " + std::strerror(n < 0 ? errno : EIO));
        done += std::size_t(n);
    }
}

void AtomicFile::write(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    while (bytes > 0) {
        const std::size_t n = std::min(bytes, kPiece - used_);
        std::memcpy(buffer_.get() + used_, p, n);
        used_ += n, p += n, bytes -= n;
        if (used_ == kPiece) {
            put(kPiece);
            size_ += kPiece;
            used_ = 0;
        }
    }
}

void AtomicFile::commit(bool durable) {
    // The last piece: direct I/O writes whole blocks, so it is padded, and the file cut back.
    std::size_t tail = used_;
    if (direct_ && tail % kAlign != 0) {
        const std::size_t padded = (tail + kAlign - 1) / kAlign * kAlign;
        std::memset(buffer_.get() + tail, 0, padded - tail);
        tail = padded;
    }
    if (tail > 0) put(tail);
    size_ += used_;
    used_ = 0;
    if (::ftruncate(fd_, off_t(size_)) != 0)
        throw Error("failed writing '" + tmp_ + "': " + std::strerror(errno));
    // fsync before rename: otherwise the rename may reach the disk before the data does (direct
    // I/O leaves the data in the disk's own cache, and the file's size in the page cache).
    if (durable && ::fsync(fd_) != 0) throw Error("failed writing '" + tmp_ + "': " + std::strerror(errno));
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) throw Error("failed closing '" + tmp_ + "': " + std::strerror(errno));
    std::error_code ec, ignored;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) {
        std::filesystem::remove(tmp_, ignored);  // (its own error code: the rename's is the message)
        throw Error("cannot rename '" + tmp_ + "' to '" + path_ + "': " + ec.message());
    }
}

}  // namespace strata::io
