// The link between two GPUs, measured: cudaMemcpyPeerAsync of 1 GiB from GPU 0 to GPU 1 and back,
// and both at once, CUDA events after a warm-up, the median of 9 (GB/s: bytes moved / time).
// What the scaling table's halo bytes per step are set against (scripts/gpu-check.sh scaling).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        const cudaError_t e = (call);                                                                 \
        if (e != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "strata-peer: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e), \
                         __FILE__, __LINE__);                                                         \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

int main() {
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    if (n < 2) {
        std::fprintf(stderr, "strata-peer: needs two GPUs (this machine has %d)\n", n);
        return 1;
    }
    const std::size_t bytes = std::size_t(1) << 30;
    void* buf[2][2];
    cudaStream_t s[2];
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    for (int d = 0; d < 2; ++d) {
        CHECK(cudaSetDevice(d));
        if (can) CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
        CHECK(cudaMalloc(&buf[d][0], bytes));
        CHECK(cudaMalloc(&buf[d][1], bytes));
        CHECK(cudaStreamCreate(&s[d]));
    }
    auto time = [&](bool forward, bool backward) {
        std::vector<float> ms;
        for (int r = 0; r < 10; ++r) {
            cudaEvent_t a, b;
            CHECK(cudaSetDevice(0));
            CHECK(cudaEventCreate(&a));
            CHECK(cudaEventCreate(&b));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaEventRecord(a, s[0]));
            if (forward) CHECK(cudaMemcpyPeerAsync(buf[1][0], 1, buf[0][0], 0, bytes, s[0]));
            if (backward) {
                CHECK(cudaSetDevice(1));
                CHECK(cudaStreamWaitEvent(s[1], a, 0));
                CHECK(cudaMemcpyPeerAsync(buf[0][1], 0, buf[1][1], 1, bytes, s[1]));
                cudaEvent_t c;
                CHECK(cudaEventCreate(&c));
                CHECK(cudaEventRecord(c, s[1]));
                CHECK(cudaSetDevice(0));
                CHECK(cudaStreamWaitEvent(s[0], c, 0));
            }
            CHECK(cudaEventRecord(b, s[0]));
            CHECK(cudaEventSynchronize(b));
            float t = 0;
            CHECK(cudaEventElapsedTime(&t, a, b));
            if (r > 0) ms.push_back(t);  // the first is the warm-up
        }
        std::sort(ms.begin(), ms.end());
        const double moved = double(bytes) * (int(forward) + int(backward));
        return moved / (ms[ms.size() / 2] * 1e-3) / 1e9;
    };
    std::printf("peer access: %s\n", can ? "yes (NVLink or PCIe P2P)" : "no (staged by the driver)");
    std::printf("GPU 0 -> GPU 1         : %.1f GB/s\n", time(true, false));
    std::printf("GPU 1 -> GPU 0 at once : %.1f GB/s (both ways together)\n", time(true, true));
    return 0;
}
