"""Hand-written probe kernels (session 5): taller skew tiles and skew strips, f32."""

# A skew tile H destination elements tall (H a multiple of 32): every destination
# row's window starts on a 32-byte sector, so the tile holds H + 7 source rows.
SKEW_H = r"""
extern "C" __global__ void __launch_bounds__(32 * BR)
skew_h(const unsigned* __restrict__ src, unsigned* __restrict__ dst, unsigned batch,
       unsigned rows, unsigned cols, unsigned src_ld, unsigned dst_ld, unsigned sbs, unsigned dbs)
{
    __shared__ unsigned tile[(H + 7) * 33];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned dst_off = (unsigned)((unsigned long long)dst / 4);
    const unsigned tiles_x = (cols + 31) / 32;
    const unsigned ntiles = tiles_x * ((rows + 7 + H - 1) / H);
    for (unsigned b = blockIdx.y; b < batch; b += gridDim.y) {
        for (unsigned t = blockIdx.x; t < ntiles; t += gridDim.x) {
            const unsigned tile_r = t / tiles_x, tile_c = t % tiles_x;
            #pragma unroll
            for (unsigned j = 0; j < (H + 7 + BR - 1) / BR; ++j) {
                const unsigned row_s = tile_r * H + ty + j * BR;
                const unsigned col = tile_c * 32 + tx;
                if (ty + j * BR < H + 7 && 6 < row_s && row_s < rows + 7 && col < cols)
                    tile[(ty + j * BR) * 33 + tx] = src[b * sbs + (row_s - 7) * src_ld + col];
            }
            __syncthreads();
            #pragma unroll
            for (unsigned j = 0; j < 32 / BR; ++j) {
                const unsigned out_row = tile_c * 32 + ty + j * BR;
                const unsigned shift = (out_row * dst_ld + dst_off) % 8;
                #pragma unroll
                for (unsigned h = 0; h < H / 32; ++h) {
                    const unsigned out_s = tile_r * H + h * 32 + tx + 7 - shift;
                    if (out_row < cols && 6 < out_s && out_s < rows + 7)
                        dst[b * dbs + out_row * dst_ld + (out_s - 7)] = tile[(h * 32 + tx + 7 - shift) * 33 + ty + j * BR];
                }
            }
            __syncthreads();
        }
    }
}
"""

# A strip of S skew tiles down one 32-column band: the 7 rows a window reaches back
# are kept from the previous tile in a ring of 64 rows, so a tile loads 32 rows.
STRIP = r"""
extern "C" __global__ void __launch_bounds__(256)
skew_strip(const unsigned* __restrict__ src, unsigned* __restrict__ dst, unsigned batch,
           unsigned rows, unsigned cols, unsigned src_ld, unsigned dst_ld, unsigned sbs, unsigned dbs)
{
    __shared__ unsigned tile[64 * 33];
    const unsigned tx = threadIdx.x, ty = threadIdx.y;
    const unsigned dst_off = (unsigned)((unsigned long long)dst / 4);
    const unsigned tiles_x = (cols + 31) / 32;
    const unsigned ntr = (rows + 38) / 32;
    const unsigned nstrips = tiles_x * ((ntr + S - 1) / S);
    for (unsigned b = blockIdx.y; b < batch; b += gridDim.y) {
        for (unsigned t = blockIdx.x; t < nstrips; t += gridDim.x) {
            const unsigned strip = t / tiles_x, tile_c = t % tiles_x;
            const unsigned col = tile_c * 32 + tx;
            #pragma unroll 1
            for (unsigned s = 0; s < S; ++s) {
                const unsigned tr = strip * S + s;
                if (tr >= ntr) break;
                const unsigned lo = s == 0 ? 0 : 7;
                #pragma unroll
                for (unsigned j = 0; j < 5; ++j) {
                    const unsigned r = lo + ty + j * 8;
                    const unsigned row_s = tr * 32 + r;
                    if (r < 39 && 6 < row_s && row_s < rows + 7 && col < cols)
                        tile[(row_s & 63) * 33 + tx] = src[b * sbs + (row_s - 7) * src_ld + col];
                }
                __syncthreads();
                #pragma unroll
                for (unsigned j = 0; j < 4; ++j) {
                    const unsigned out_row = tile_c * 32 + ty + j * 8;
                    const unsigned shift = (out_row * dst_ld + dst_off) % 8;
                    const unsigned out_s = tr * 32 + tx + 7 - shift;
                    if (out_row < cols && 6 < out_s && out_s < rows + 7)
                        dst[b * dbs + out_row * dst_ld + (out_s - 7)] = tile[(out_s & 63) * 33 + ty + j * 8];
                }
                __syncthreads();
            }
        }
    }
}
"""

COPY = r"""
extern "C" __global__ void copy16(const uint4* __restrict__ a, uint4* __restrict__ b, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) b[i] = a[i];
}
"""
