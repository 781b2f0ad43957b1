#!/bin/sh
# Writes the probe's sources with the bankfree-gen binary $1 into folder $2.
G="$1 gen"; D=$2; mkdir -p $D
$G --strategy pad --elem-bytes 1 --block-rows 16 --vec 4 > $D/u8p_t32r16.cu
$G --strategy swizzle --elem-bytes 1 --block-rows 16 --vec 4 > $D/u8x_t32r16.cu
$G --strategy swizzle --elem-bytes 1 --block-rows 8 --vec 4 > $D/u8x_t32r8.cu
$G --strategy swizzle --elem-bytes 1 --tile 16 --block-rows 16 --vec 4 > $D/u8x_t16r16.cu
$G --strategy pad --elem-bytes 2 --vec 4 > $D/e2p.cu
$G --strategy swizzle --elem-bytes 2 --vec 4 > $D/e2x.cu
$G --strategy pad --block-rows 16 --vec 2 > $D/e4p.cu
$G --strategy swizzle --block-rows 16 --vec 2 > $D/e4x.cu
$G --strategy pad --elem-bytes 8 > $D/e8p.cu
$G --strategy swizzle --elem-bytes 8 > $D/e8x.cu
$G --strategy pad --elem-bytes 12 --tile 64 > $D/e12p.cu
$G --strategy pad --elem-bytes 16 --tile 16 --block-rows 16 > $D/e16p.cu
$G --strategy pad --form skew --tile 64 > $D/skew.cu
