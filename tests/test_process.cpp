// The strata binary run as users run it, then interrupted (SIGINT, SIGTERM, twice) or short of
// disk (a file-size limit): what it leaves behind is checked: its exit code, one line on stderr,
// and a checkpoint that is whole and restarts bitwise equal to the uninterrupted run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "strata/core/error.hpp"
#include "strata/core/memory.hpp"
#include "strata/io/checkpoint.hpp"

extern char** environ;

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// The binary started with `args`, its output in DIR/out.txt and DIR/err.txt.
class Process {
public:
    // `max_file_bytes`: a file-size limit (RLIMIT_FSIZE) for the process, standing for a full disk;
    // `max_address_bytes`: an address-space limit (RLIMIT_AS, ulimit -v), standing for a job's memory.
    Process(const fs::path& dir, std::vector<std::string> args, rlim_t max_file_bytes = RLIM_INFINITY,
            rlim_t max_address_bytes = RLIM_INFINITY)
        : dir_(dir) {
        // An address-space limit is set in the child by the shell (this process's own would count
        // everything it has mapped, and posix_spawn maps a stack here).
        const char* program = STRATA_CLI;
        args.insert(args.begin(), STRATA_CLI);
        if (max_address_bytes != RLIM_INFINITY) {
            args.insert(args.begin(),
                        {"/bin/sh", "-c",
                         "ulimit -v " + std::to_string(max_address_bytes / 1024) + " && exec \"$0\" \"$@\""});
            program = "/bin/sh";
        }
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t io;
        posix_spawn_file_actions_init(&io);
        posix_spawn_file_actions_addopen(&io, 1, (dir / "out.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&io, 2, (dir / "err.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        rlimit before{};
        getrlimit(RLIMIT_FSIZE, &before);
        rlimit limited = before;
        limited.rlim_cur = std::min(max_file_bytes, before.rlim_max);
        setrlimit(RLIMIT_FSIZE, &limited);  // inherited by the child, restored here at once
        const int rc = posix_spawn(&pid_, program, &io, nullptr, argv.data(), environ);
        setrlimit(RLIMIT_FSIZE, &before);
        posix_spawn_file_actions_destroy(&io);
        if (rc != 0) pid_ = -1;
    }
    ~Process() {
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    bool started() const { return pid_ > 0; }
    // Waits until the run has printed its header (so its time loop is under way), at most 30 s.
    bool running() const {
        for (int i = 0; i < 3000; ++i) {
            if (slurp(dir_ / "out.txt").find('\n') != std::string::npos) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    void signal(int s) const { kill(pid_, s); }
    // Whether it has ended (not reaped: exit_code() still reads its status).
    bool exited() const {
        siginfo_t si{};
        return waitid(P_PID, id_t(pid_), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid_;
    }
    // The exit code (128 + the signal if one killed it), or -1 after 30 s (then killed).
    int exit_code() {
        int status = 0;
        for (int i = 0; i < 3000; ++i) {
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return -1;
    }
    std::string err() const { return slurp(dir_ / "err.txt"); }

private:
    fs::path dir_;
    pid_t pid_ = -1;
};

fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("strata-interrupt-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

int run_to_end(const fs::path& dir, const std::vector<std::string>& args, rlim_t max_file_bytes = RLIM_INFINITY) {
    Process p(dir, args, max_file_bytes);
    return p.exit_code();
}

// Long enough never to end by itself within the test (~0.1 ms per step on one core).
const std::vector<std::string> kLongRun = {"run", "heat3d", "-n", "40", "--steps", "100000000"};

TEST(Interrupt, SigintKeepsACheckpointThatRestartsBitwise) {
    const fs::path d = fresh_dir("int");
    const std::string ck = (d / "stopped.ck").string();
    std::vector<std::string> args = kLongRun;
    args.insert(args.end(), {"--checkpoint", ck, "--every", "200", "--out", (d / "frames").string()});
    Process p(d, args);
    ASSERT_TRUE(p.started());
    ASSERT_TRUE(p.running());
    // Signalled once a frame past step 0 is out (not after a fixed time: a sanitized build is
    // several times slower), so the stop has snapshots to finish and a step to save.
    const auto frame_written = [&] {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(d / "frames", ec))
            if (e.path().extension() == ".vti" && e.path().stem() != "heat3d_000000") return true;
        return false;
    };
    for (int i = 0; i < 3000 && !frame_written(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(frame_written());
    p.signal(SIGINT);
    EXPECT_EQ(p.exit_code(), 130);
    const std::string err = p.err();
    EXPECT_TRUE(err.starts_with("strata: interrupted by SIGINT at step ")) << err;
    EXPECT_NE(err.find("--restart " + ck), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    ASSERT_TRUE(fs::exists(ck));
    EXPECT_FALSE(fs::exists(ck + ".tmp"));
    const std::int64_t stopped = io::read_checkpoint(ck).header.step;
    EXPECT_GT(stopped, 0);
    // The pending snapshots were written: the .pvd lists the last frame before the stop.
    EXPECT_TRUE(fs::exists(d / "frames" / "heat3d.pvd"));

    // Restarted to a few steps further, it ends where an uninterrupted run does, bitwise.
    const std::string end = std::to_string(stopped + 7);
    const std::string restarted = (d / "restarted.ck").string(), straight = (d / "straight.ck").string();
    ASSERT_EQ(run_to_end(d, {"run", "heat3d", "-n", "40", "--steps", end, "--restart", ck, "--checkpoint", restarted}),
              0);
    ASSERT_EQ(run_to_end(d, {"run", "heat3d", "-n", "40", "--steps", end, "--checkpoint", straight}), 0);
    EXPECT_EQ(slurp(restarted), slurp(straight));
    EXPECT_EQ(io::read_checkpoint(restarted).header.step, stopped + 7);
    fs::remove_all(d);
}

TEST(Interrupt, SigtermExitsWith143AndSaysNothingWasSaved) {
    const fs::path d = fresh_dir("term");
    Process p(d, kLongRun);
    ASSERT_TRUE(p.started());
    ASSERT_TRUE(p.running());
    p.signal(SIGTERM);
    EXPECT_EQ(p.exit_code(), 143);
    const std::string err = p.err();
    EXPECT_TRUE(err.starts_with("strata: interrupted by SIGTERM")) << err;
    EXPECT_NE(err.find("nothing saved"), std::string::npos) << err;
    fs::remove_all(d);
}

// A second signal ends the process at once, even while a checkpoint is being written (one every
// step here): the previous checkpoint stays whole and no temporary is left.
TEST(Interrupt, SecondSignalExitsAtOnceAndLeavesTheCheckpointWhole) {
    const fs::path d = fresh_dir("twice");
    const std::string ck = (d / "every-step.ck").string();
    std::vector<std::string> args = {"run", "heat3d", "-n", "64", "--steps", "100000000", "--checkpoint", ck,
                                     "--checkpoint-every", "1"};
    Process p(d, args);
    ASSERT_TRUE(p.started());
    ASSERT_TRUE(p.running());
    // Signalled once the first checkpoint is out (not after a fixed time: a sanitized build is
    // several times slower), so there is a previous one to keep whole.
    for (int i = 0; i < 3000 && !fs::exists(ck); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(fs::exists(ck));
    // Signals sent while one is still pending merge into one (a loaded machine may not run the
    // process between two sends), so they go on every millisecond until it has ended: the first
    // delivered asks for a stop, the second ends the process within the stop's last chunk.
    p.signal(SIGINT);
    for (int i = 0; i < 5000 && !p.exited(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        p.signal(SIGINT);
    }
    EXPECT_EQ(p.exit_code(), 130);
    EXPECT_NE(p.err().find("interrupted again: stopped at once"), std::string::npos) << p.err();
    ASSERT_TRUE(fs::exists(ck));
    EXPECT_FALSE(fs::exists(ck + ".tmp"));
    const io::Checkpoint c = io::read_checkpoint(ck);  // whole: its checksum holds
    EXPECT_GT(c.header.step, 0);
    fs::remove_all(d);
}

// The disk fills up (a file-size limit below a checkpoint's size) while a run replaces a
// checkpoint: a clear error, the previous checkpoint as it was, no temporary left.
TEST(DiskFull, CheckpointFailsClearlyAndKeepsThePreviousOne) {
    const fs::path d = fresh_dir("full-ck");
    const std::string ck = (d / "run.ck").string();
    ASSERT_EQ(run_to_end(d, {"run", "heat3d", "-n", "40", "--steps", "10", "--checkpoint", ck}), 0);
    const std::string before = slurp(ck);
    Process p(d, {"run", "heat3d", "-n", "40", "--steps", "20", "--checkpoint", ck, "--checkpoint-every", "5"},
              before.size() / 2);
    EXPECT_EQ(p.exit_code(), 1);
    const std::string err = p.err();
    EXPECT_TRUE(err.starts_with("strata: error: failed writing '" + ck + ".tmp': File too large")) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(slurp(ck), before);
    EXPECT_FALSE(fs::exists(ck + ".tmp"));
    fs::remove_all(d);
}

// The same for snapshots: the frame that did not fit is removed, the error names it.
TEST(DiskFull, SnapshotFailsClearlyAndLeavesNoPartialFrame) {
    const fs::path d = fresh_dir("full-frame");
    const fs::path frames = d / "frames";
    Process p(d, {"run", "heat3d", "-n", "48", "--steps", "20", "--every", "5", "--out", frames.string()},
              100 * 1024);  // a 48^3 fp64 frame is 885 KB
    EXPECT_EQ(p.exit_code(), 1);
    const std::string err = p.err();
    EXPECT_NE(err.find("failed writing '" + (frames / "heat3d_000005.vti").string() + "': File too large"),
              std::string::npos)
        << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(fs::exists(frames / "heat3d_000005.vti"));
    fs::remove_all(d);
}

// A grid beyond any machine's memory is refused at once, before anything is allocated.
TEST(Memory, HugeGridsAreRefusedWithTheBytesNeededAndAvailable) {
    const fs::path d = fresh_dir("memory");
    for (const auto& [model, what] : {std::pair{"heat3d", "heat3d's fields (2 buffers of 20002 x 20002 x 20002 fp64"},
                                      std::pair{"wave3d", "wave3d's velocity model"},
                                      std::pair{"apf", "apf's fields (3 buffers of 1000003 x 1000003 fp64"}}) {
        const bool apf = std::string(model) == "apf";
        Process p(d, {"run", model, "-n", apf ? "1000000" : "20000", apf ? "-i" : "--steps", "1"});
        EXPECT_EQ(p.exit_code(), 2) << model;
        const std::string err = p.err();
        EXPECT_TRUE(err.starts_with(std::string("strata: error: ") + what)) << err;
        EXPECT_NE(err.find("of host memory needed"), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    fs::remove_all(d);
}

// A job's memory is often a limit of the process (ulimit -v) or of its cgroup, not the machine's:
// a grid past it is refused up front with what the limit leaves, not ended by std::bad_alloc (or
// the OOM killer) once allocated.
TEST(Memory, GridsPastTheProcessLimitAreRefusedWithWhatItLeaves) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no address-space limit fits it";
#else
    const fs::path d = fresh_dir("memory-limit");
    // 2 buffers of 602^3 fp64: 3.5 GB, against 2 GB of address space.
    Process p(d, {"run", "heat3d", "-n", "600", "--steps", "1", "--backend", "cpu"}, RLIM_INFINITY,
              rlim_t(2) << 30);
    EXPECT_EQ(p.exit_code(), 2);
    const std::string err = p.err();
    EXPECT_TRUE(err.starts_with("strata: error: heat3d's fields (2 buffers of 602 x 602 x 602 fp64")) << err;
    EXPECT_NE(err.find("3.49 GB of host memory needed"), std::string::npos) << err;
    const std::size_t at = err.find("needed, ");
    ASSERT_NE(at, std::string::npos) << err;
    EXPECT_LT(std::stod(err.substr(at + 8)), 2.2) << err;  // what the limit leaves, in GB (or MB)
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    fs::remove_all(d);
#endif
}

// $STRATA_NODE_MEMORY, what a scheduler allows a run on each node, and a rank's share of the node's
// (share_host_memory: the free memory and the cgroup are then the node's, which the share counted).
TEST(Memory, NodeMemoryFromTheEnvironmentAndARanksShare) {
    for (const auto& [text, bytes] :
         {std::pair{"1500M", std::int64_t(1500000000)}, std::pair{"2GB", std::int64_t(2000000000)},
          std::pair{"64g", std::int64_t(64000000000)}, std::pair{"123456", std::int64_t(123456)},
          std::pair{"0.5T", std::int64_t(500000000000)}}) {
        setenv("STRATA_NODE_MEMORY", text, 1);
        EXPECT_EQ(host_memory().assigned, bytes) << text;
    }
    for (const char* bad : {"3Q", "G", "-1G", "2 GB"}) {
        setenv("STRATA_NODE_MEMORY", bad, 1);
        EXPECT_THROW(host_memory(), UsageError) << bad;
    }
    setenv("STRATA_NODE_MEMORY", "", 1);
    EXPECT_EQ(host_memory().assigned, -1);
    unsetenv("STRATA_NODE_MEMORY");
    HostMemory m;
    m.free = 10000, m.cgroup = 5000, m.assigned = 7000, m.limits = 8000;
    EXPECT_EQ(m.available(), 5000);
    m.share = 6000;
    EXPECT_EQ(m.available(), 6000);
    m.limits = 4000;
    EXPECT_EQ(m.available(), 4000);
    EXPECT_EQ(format_bytes(999999999), "1 GB");  // (not "1e+03 MB")
}

// The cgroups' limits: v2's and v1's files, the process's cgroup and those above it, the page cache
// the kernel can drop (the files' pages but shared memory's) left out.
TEST(Memory, CgroupHeadroomIsTheLeastOverTheCgroupsAboveTheProcess) {
    const fs::path root = fresh_dir("cgroups");
    auto put = [&](const fs::path& file, const std::string& text) {
        fs::create_directories((root / file).parent_path());
        std::ofstream(root / file) << text;
    };
    EXPECT_EQ(cgroup_headroom(root.string(), "0::/\n"), -1);  // nothing mounted: no limit known
    put("memory.max", "max\n");
    put("memory.current", "123456\n");
    EXPECT_EQ(cgroup_headroom(root.string(), "0::/\n"), -1);
    // A batch job's limit on the job, its step's cgroup without one: the job's counts.
    put("job/memory.max", "4000000000\n");
    put("job/memory.current", "1000000000\n");
    put("job/memory.stat", "anon 400000000\nfile 600000000\nshmem 100000000\ninactive_file 200000000\n");
    put("job/step/memory.max", "max\n");
    put("job/step/memory.current", "900000000\n");
    EXPECT_EQ(cgroup_headroom(root.string(), "0::/job/step\n"), 3500000000);
    put("job/step/memory.max", "1500000000\n");  // a tighter step
    EXPECT_EQ(cgroup_headroom(root.string(), "0::/job/step\n"), 600000000);
    // cgroup v1: the memory controller's hierarchy, "no limit" written as a huge number.
    put("memory/memory.limit_in_bytes", "9223372036854771712\n");
    put("memory/memory.usage_in_bytes", "5000000000\n");
    put("memory/a/memory.limit_in_bytes", "2000000000\n");
    put("memory/a/memory.usage_in_bytes", "1500000000\n");
    put("memory/a/memory.stat", "cache 0\ntotal_cache 150000000\ntotal_shmem 50000000\n");
    EXPECT_EQ(cgroup_headroom(root.string(), "9:name=systemd:/\n4:memory:/a\n1:cpu:/\n0::/\n"), 600000000);
    // Lines it does not know, and a cgroup whose files are not there: no limit from them.
    EXPECT_EQ(cgroup_headroom(root.string(), "garbage\n4:memory:/not/mounted\n"), -1);
    // Outside the cgroup namespace's root: the mount's own limit is not the process's.
    put("memory.max", "200000\n");
    EXPECT_EQ(cgroup_headroom(root.string(), "0::/\n"), 200000 - 123456);
    EXPECT_EQ(cgroup_headroom(root.string(), "0::/../../x\n"), -1);
    fs::remove_all(root);
}

}  // namespace
}  // namespace strata
