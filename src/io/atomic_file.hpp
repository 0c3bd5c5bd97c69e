#pragma once
// A file that appears under its name only once it is complete: bytes go to NAME.tmp, which is
// flushed, fsync'ed and renamed over NAME on commit(). A crash (or an exception) mid-write leaves
// the previous NAME untouched; an uncommitted temporary is removed.
//
// The bytes reach the disk by direct I/O (O_DIRECT) where the file system takes it: through an
// aligned buffer of kPiece bytes, the last piece padded and the file cut back to its size. A
// checkpoint or a frame is written once and not read back by this process, so the page cache
// buys nothing, and on some machines costs much: on the development VM (ext4 on a virtio disk)
// 134 MB went to the disk at 0.36 GB/s through write(2) and fsync, at 1.6-1.9 GB/s direct.
// Where O_DIRECT is refused (tmpfs, some network and FUSE file systems) the same pieces go through
// the page cache.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "strata/core/interrupt.hpp"

namespace strata::io {

// A write to `path` failed with `error` (errno): removes the partial file and throws Error
// "failed writing 'PATH': No space left on device (the partial file was removed)".
[[noreturn]] void write_failed(const std::string& path, int error);

// UsageError where `path` exists but is not a regular file (a link to one is fine): a folder, a
// device, a pipe. The rename that completes a write replaces what is there, so a checkpoint
// named /dev/null would have replaced the device (as root), never written into it.
void require_replaceable(const std::string& path);

class AtomicFile {
public:
    static constexpr std::size_t kPiece = std::size_t(8) << 20;  // bytes per write(2)
    static constexpr std::size_t kAlign = 4096;                  // O_DIRECT's offsets, sizes, buffer

    explicit AtomicFile(std::string path);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(const void* data, std::size_t bytes);
    void write(const std::string& s) { write(s.data(), s.size()); }
    // `durable`: fsync before the rename, so the new content survives a power loss, not only a
    // crash of this process.
    void commit(bool durable = true);
    // Whether the bytes go to the disk directly (O_DIRECT), not through the page cache.
    bool direct() const { return direct_; }

private:
    void put(std::size_t bytes);  // the buffer's first `bytes` to the file (a multiple of kAlign if direct)
    struct Free {
        void operator()(unsigned char* p) const;
    };
    std::string path_, tmp_;
    int fd_ = -1;
    bool direct_ = false;
    std::unique_ptr<unsigned char, Free> buffer_;
    std::size_t used_ = 0;         // bytes in the buffer
    std::uint64_t size_ = 0;       // bytes written to the file
    ExitRemoves removed_on_exit_;  // an insisted Ctrl-C (interrupt.hpp) leaves no .tmp behind
};

}  // namespace strata::io
