//go:build amd64 && !purego

#include "textflag.h"

// AVX2/FMA kernels; see cpu_amd64.go for their contracts and vec.go for the
// scalar Go twins that round identically. Go assembler operand order is
// the reverse of Intel's: VFMADD231PD m, b, acc is acc = b*m + acc.

// Constants, each repeated in four lanes so that it can be a 256-bit
// memory operand.

// -708
DATA expLo<>+0(SB)/8, $0xc086200000000000
DATA expLo<>+8(SB)/8, $0xc086200000000000
DATA expLo<>+16(SB)/8, $0xc086200000000000
DATA expLo<>+24(SB)/8, $0xc086200000000000
GLOBL expLo<>(SB), RODATA|NOPTR, $32

// 709
DATA expHi<>+0(SB)/8, $0x4086280000000000
DATA expHi<>+8(SB)/8, $0x4086280000000000
DATA expHi<>+16(SB)/8, $0x4086280000000000
DATA expHi<>+24(SB)/8, $0x4086280000000000
GLOBL expHi<>(SB), RODATA|NOPTR, $32

// 1/ln 2
DATA log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL log2e<>(SB), RODATA|NOPTR, $32

// 1.5 * 2^52
DATA shifter<>+0(SB)/8, $0x4338000000000000
DATA shifter<>+8(SB)/8, $0x4338000000000000
DATA shifter<>+16(SB)/8, $0x4338000000000000
DATA shifter<>+24(SB)/8, $0x4338000000000000
GLOBL shifter<>(SB), RODATA|NOPTR, $32

// ln 2, high part
DATA ln2hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA ln2hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA ln2hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA ln2hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL ln2hi<>(SB), RODATA|NOPTR, $32

// ln 2, low part
DATA ln2lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA ln2lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA ln2lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA ln2lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL ln2lo<>(SB), RODATA|NOPTR, $32

// 1
DATA one<>+0(SB)/8, $0x3ff0000000000000
DATA one<>+8(SB)/8, $0x3ff0000000000000
DATA one<>+16(SB)/8, $0x3ff0000000000000
DATA one<>+24(SB)/8, $0x3ff0000000000000
GLOBL one<>(SB), RODATA|NOPTR, $32

// 2
DATA two<>+0(SB)/8, $0x4000000000000000
DATA two<>+8(SB)/8, $0x4000000000000000
DATA two<>+16(SB)/8, $0x4000000000000000
DATA two<>+24(SB)/8, $0x4000000000000000
GLOBL two<>(SB), RODATA|NOPTR, $32

// -2
DATA mtwo<>+0(SB)/8, $0xc000000000000000
DATA mtwo<>+8(SB)/8, $0xc000000000000000
DATA mtwo<>+16(SB)/8, $0xc000000000000000
DATA mtwo<>+24(SB)/8, $0xc000000000000000
GLOBL mtwo<>(SB), RODATA|NOPTR, $32

// clears the sign
DATA absMask<>+0(SB)/8, $0x7fffffffffffffff
DATA absMask<>+8(SB)/8, $0x7fffffffffffffff
DATA absMask<>+16(SB)/8, $0x7fffffffffffffff
DATA absMask<>+24(SB)/8, $0x7fffffffffffffff
GLOBL absMask<>(SB), RODATA|NOPTR, $32

// the sign
DATA signMask<>+0(SB)/8, $0x8000000000000000
DATA signMask<>+8(SB)/8, $0x8000000000000000
DATA signMask<>+16(SB)/8, $0x8000000000000000
DATA signMask<>+24(SB)/8, $0x8000000000000000
GLOBL signMask<>(SB), RODATA|NOPTR, $32

// 1/2!
DATA c2<>+0(SB)/8, $0x3fe0000000000000
DATA c2<>+8(SB)/8, $0x3fe0000000000000
DATA c2<>+16(SB)/8, $0x3fe0000000000000
DATA c2<>+24(SB)/8, $0x3fe0000000000000
GLOBL c2<>(SB), RODATA|NOPTR, $32

// 1/3!
DATA c3<>+0(SB)/8, $0x3fc5555555555555
DATA c3<>+8(SB)/8, $0x3fc5555555555555
DATA c3<>+16(SB)/8, $0x3fc5555555555555
DATA c3<>+24(SB)/8, $0x3fc5555555555555
GLOBL c3<>(SB), RODATA|NOPTR, $32

// 1/4!
DATA c4<>+0(SB)/8, $0x3fa5555555555555
DATA c4<>+8(SB)/8, $0x3fa5555555555555
DATA c4<>+16(SB)/8, $0x3fa5555555555555
DATA c4<>+24(SB)/8, $0x3fa5555555555555
GLOBL c4<>(SB), RODATA|NOPTR, $32

// 1/5!
DATA c5<>+0(SB)/8, $0x3f81111111111111
DATA c5<>+8(SB)/8, $0x3f81111111111111
DATA c5<>+16(SB)/8, $0x3f81111111111111
DATA c5<>+24(SB)/8, $0x3f81111111111111
GLOBL c5<>(SB), RODATA|NOPTR, $32

// 1/6!
DATA c6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA c6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA c6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA c6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL c6<>(SB), RODATA|NOPTR, $32

// 1/7!
DATA c7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA c7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA c7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA c7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL c7<>(SB), RODATA|NOPTR, $32

// 1/8!
DATA c8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA c8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA c8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA c8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL c8<>(SB), RODATA|NOPTR, $32

// 1/9!
DATA c9<>+0(SB)/8, $0x3ec71de3a556c734
DATA c9<>+8(SB)/8, $0x3ec71de3a556c734
DATA c9<>+16(SB)/8, $0x3ec71de3a556c734
DATA c9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL c9<>(SB), RODATA|NOPTR, $32

// 1/10!
DATA c10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA c10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA c10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA c10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL c10<>(SB), RODATA|NOPTR, $32

// 1/11!
DATA c11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA c11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA c11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA c11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL c11<>(SB), RODATA|NOPTR, $32

// 1/12!
DATA c12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA c12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA c12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA c12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL c12<>(SB), RODATA|NOPTR, $32

// func kern4x8(kk int, a *float64, sa, sq int, b *float64, ldb int, c *float64, ldc int, bias *float64)
TEXT ·kern4x8(SB), NOSPLIT, $0-72
	MOVQ kk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ sa+16(FP), R8
	MOVQ sq+24(FP), R9
	MOVQ b+32(FP), DI
	MOVQ ldb+40(FP), R10
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R11
	MOVQ bias+64(FP), R13
	SHLQ $3, R8
	SHLQ $3, R9
	SHLQ $3, R10
	SHLQ $3, R11

	// Row pointers of A: SI, AX, BX, R12.
	LEAQ (SI)(R8*1), AX
	LEAQ (AX)(R8*1), BX
	LEAQ (BX)(R8*1), R12

	// Accumulators Y4..Y11 (row r in Y(4+2r), Y(5+2r)) start at the bias
	// or at +0.
	TESTQ   R13, R13
	JZ      kzero
	VMOVUPD (R13), Y4
	VMOVUPD 32(R13), Y5
	JMP     kinit

kzero:
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5

kinit:
	VMOVAPD Y4, Y6
	VMOVAPD Y5, Y7
	VMOVAPD Y4, Y8
	VMOVAPD Y5, Y9
	VMOVAPD Y4, Y10
	VMOVAPD Y5, Y11
	TESTQ   CX, CX
	JLE     kstore

kloop:
	VMOVUPD      (DI), Y0
	VMOVUPD      32(DI), Y1
	VBROADCASTSD (SI), Y2
	VBROADCASTSD (AX), Y3
	VFMADD231PD  Y0, Y2, Y4
	VFMADD231PD  Y1, Y2, Y5
	VFMADD231PD  Y0, Y3, Y6
	VFMADD231PD  Y1, Y3, Y7
	VBROADCASTSD (BX), Y2
	VBROADCASTSD (R12), Y3
	VFMADD231PD  Y0, Y2, Y8
	VFMADD231PD  Y1, Y2, Y9
	VFMADD231PD  Y0, Y3, Y10
	VFMADD231PD  Y1, Y3, Y11
	ADDQ         R9, SI
	ADDQ         R9, AX
	ADDQ         R9, BX
	ADDQ         R9, R12
	ADDQ         R10, DI
	DECQ         CX
	JNZ          kloop

kstore:
	VMOVUPD Y4, (DX)
	VMOVUPD Y5, 32(DX)
	ADDQ    R11, DX
	VMOVUPD Y6, (DX)
	VMOVUPD Y7, 32(DX)
	ADDQ    R11, DX
	VMOVUPD Y8, (DX)
	VMOVUPD Y9, 32(DX)
	ADDQ    R11, DX
	VMOVUPD Y10, (DX)
	VMOVUPD Y11, 32(DX)
	VZEROUPPER
	RET

// func expAVX2(dst, x *float64, n int)
TEXT ·expAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $2, CX
	JZ   edone
	VMOVUPD expLo<>(SB), Y12
	VMOVUPD expHi<>(SB), Y13
	VMOVUPD shifter<>(SB), Y14

eloop:
	VMOVUPD (SI), Y0
	VMAXPD  Y0, Y12, Y1 // max(lo, x); NaN x stays NaN
	VMINPD  Y1, Y13, Y1 // min(hi, .)
	VMOVAPD Y14, Y2
	VFMADD231PD log2e<>(SB), Y1, Y2 // t = x log2e + shifter
	VSUBPD  Y14, Y2, Y3 // k = t - shifter
	VFNMADD231PD ln2hi<>(SB), Y3, Y1 // r = x - k ln2hi
	VFNMADD231PD ln2lo<>(SB), Y3, Y1 // r -= k ln2lo
	VMOVUPD c12<>(SB), Y4
	VFMADD213PD c11<>(SB), Y1, Y4 // p = p r + c
	VFMADD213PD c10<>(SB), Y1, Y4
	VFMADD213PD c9<>(SB), Y1, Y4
	VFMADD213PD c8<>(SB), Y1, Y4
	VFMADD213PD c7<>(SB), Y1, Y4
	VFMADD213PD c6<>(SB), Y1, Y4
	VFMADD213PD c5<>(SB), Y1, Y4
	VFMADD213PD c4<>(SB), Y1, Y4
	VFMADD213PD c3<>(SB), Y1, Y4
	VFMADD213PD c2<>(SB), Y1, Y4
	VFMADD213PD one<>(SB), Y1, Y4
	VFMADD213PD one<>(SB), Y1, Y4
	VPSLLQ  $52, Y2, Y2
	VPADDQ  Y2, Y4, Y4 // p * 2^k
	VCMPPD  $1, Y12, Y0, Y5 // x < lo
	VANDNPD Y4, Y5, Y4 // -> 0
	VCMPPD  $3, Y0, Y0, Y5 // x is NaN
	VBLENDVPD Y5, Y0, Y4, Y4 // -> x
	VMOVUPD Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     eloop

edone:
	VZEROUPPER
	RET

// func tanhAVX2(dst, x *float64, n int)
TEXT ·tanhAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $2, CX
	JZ   tdone
	VMOVUPD expLo<>(SB), Y12
	VMOVUPD shifter<>(SB), Y14
	VXORPD  Y13, Y13, Y13

tloop:
	VMOVUPD (SI), Y0
	VANDPD  absMask<>(SB), Y0, Y1
	VMULPD  mtwo<>(SB), Y1, Y1 // y = -2|x|
	VMAXPD  Y1, Y12, Y1 // max(lo, y); NaN stays NaN
	VMOVAPD Y14, Y2
	VFMADD231PD log2e<>(SB), Y1, Y2 // t = y log2e + shifter
	VSUBPD  Y14, Y2, Y3 // k
	VFNMADD231PD ln2hi<>(SB), Y3, Y1 // r
	VFNMADD231PD ln2lo<>(SB), Y3, Y1
	VMOVUPD c12<>(SB), Y4
	VFMADD213PD c11<>(SB), Y1, Y4 // q = q r + c
	VFMADD213PD c10<>(SB), Y1, Y4
	VFMADD213PD c9<>(SB), Y1, Y4
	VFMADD213PD c8<>(SB), Y1, Y4
	VFMADD213PD c7<>(SB), Y1, Y4
	VFMADD213PD c6<>(SB), Y1, Y4
	VFMADD213PD c5<>(SB), Y1, Y4
	VFMADD213PD c4<>(SB), Y1, Y4
	VFMADD213PD c3<>(SB), Y1, Y4
	VFMADD213PD c2<>(SB), Y1, Y4
	VFMADD213PD one<>(SB), Y1, Y4
	VMULPD  Y1, Y4, Y4 // p1 = r q = e^r - 1
	VPSLLQ  $52, Y2, Y2
	VPADDQ  one<>(SB), Y2, Y2 // s = 2^k
	VSUBPD  one<>(SB), Y2, Y5 // s - 1
	VFMADD231PD Y4, Y2, Y5 // m = s p1 + (s - 1) = expm1(y)
	VSUBPD  Y5, Y13, Y6 // 0 - m
	VADDPD  two<>(SB), Y5, Y7 // 2 + m
	VDIVPD  Y7, Y6, Y6
	VANDPD  signMask<>(SB), Y0, Y8
	VORPD   Y8, Y6, Y6
	VMOVUPD Y6, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     tloop

tdone:
	VZEROUPPER
	RET

// func kern1x8(kk int, a *float64, sq int, b *float64, ldb int, c *float64, bias *float64)
TEXT ·kern1x8(SB), NOSPLIT, $0-56
	MOVQ kk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ sq+16(FP), R9
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R10
	MOVQ c+40(FP), DX
	MOVQ bias+48(FP), R13
	SHLQ $3, R9
	SHLQ $3, R10
	TESTQ   R13, R13
	JZ      k1zero
	VMOVUPD (R13), Y4
	VMOVUPD 32(R13), Y5
	JMP     k1init

k1zero:
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5

k1init:
	TESTQ CX, CX
	JLE   k1store

k1loop:
	VBROADCASTSD (SI), Y2
	VFMADD231PD  (DI), Y2, Y4
	VFMADD231PD  32(DI), Y2, Y5
	ADDQ         R9, SI
	ADDQ         R10, DI
	DECQ         CX
	JNZ          k1loop

k1store:
	VMOVUPD Y4, (DX)
	VMOVUPD Y5, 32(DX)
	VZEROUPPER
	RET

// func kern16x1(kk int, a *float64, sq int, b *float64, ldb int, c *float64)
TEXT ·kern16x1(SB), NOSPLIT, $0-48
	MOVQ kk+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ sq+16(FP), R9
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R10
	MOVQ c+40(FP), DX
	SHLQ $3, R9
	SHLQ $3, R10
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JLE   k16store

k16loop:
	VBROADCASTSD (DI), Y2
	VFMADD231PD  (SI), Y2, Y4
	VFMADD231PD  32(SI), Y2, Y5
	VFMADD231PD  64(SI), Y2, Y6
	VFMADD231PD  96(SI), Y2, Y7
	ADDQ         R9, SI
	ADDQ         R10, DI
	DECQ         CX
	JNZ          k16loop

k16store:
	VMOVUPD Y4, (DX)
	VMOVUPD Y5, 32(DX)
	VMOVUPD Y6, 64(DX)
	VMOVUPD Y7, 96(DX)
	VZEROUPPER
	RET

// func dot4x1(k4 int, a *float64, sa int, b *float64, lanes *[16]float64)
TEXT ·dot4x1(SB), NOSPLIT, $0-40
	MOVQ k4+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ sa+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ lanes+32(FP), DX
	SHLQ $3, R8
	LEAQ (SI)(R8*1), AX
	LEAQ (AX)(R8*1), BX
	LEAQ (BX)(R8*1), R12
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	SHRQ   $2, CX
	JZ     dstore

dloop:
	VMOVUPD     (DI), Y0
	VFMADD231PD (SI), Y0, Y4
	VFMADD231PD (AX), Y0, Y5
	VFMADD231PD (BX), Y0, Y6
	VFMADD231PD (R12), Y0, Y7
	ADDQ        $32, SI
	ADDQ        $32, AX
	ADDQ        $32, BX
	ADDQ        $32, R12
	ADDQ        $32, DI
	DECQ        CX
	JNZ         dloop

dstore:
	VMOVUPD Y4, (DX)
	VMOVUPD Y5, 32(DX)
	VMOVUPD Y6, 64(DX)
	VMOVUPD Y7, 96(DX)
	VZEROUPPER
	RET

// func rbfRowAVX2(n4 int, x *float64, ld int, y *float64, d int, c float64, u *float64, v float64, acc *float64, lanes *[4]float64)
TEXT ·rbfRowAVX2(SB), NOSPLIT, $0-80
	MOVQ n4+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ y+24(FP), R9
	MOVQ d+32(FP), R10
	VBROADCASTSD c+40(FP), Y15
	MOVQ u+48(FP), DI
	VBROADCASTSD v+56(FP), Y14
	MOVQ acc+64(FP), DX
	MOVQ lanes+72(FP), R11
	SHLQ $3, R8
	VMOVUPD expLo<>(SB), Y12
	VMOVUPD expHi<>(SB), Y13
	VXORPD  Y11, Y11, Y11 // lane sums
	SHRQ    $2, CX
	JZ      rdone

rloop:
	// s = sum_t (x[t*ld + j] - y[t])^2
	VXORPD Y1, Y1, Y1
	MOVQ   SI, AX
	MOVQ   R9, BX
	MOVQ   R10, R12

rdim:
	VMOVUPD      (AX), Y0
	VBROADCASTSD (BX), Y2
	VSUBPD       Y2, Y0, Y0
	VFMADD231PD  Y0, Y0, Y1
	ADDQ         R8, AX
	ADDQ         $8, BX
	DECQ         R12
	JNZ          rdim

	VMULPD  Y15, Y1, Y0 // arg = s c
	// k = exp(arg), as in expAVX2 (no NaN can occur here).
	VMAXPD  Y0, Y12, Y1
	VMINPD  Y1, Y13, Y1
	VMOVUPD shifter<>(SB), Y2
	VFMADD231PD log2e<>(SB), Y1, Y2
	VSUBPD  shifter<>(SB), Y2, Y3
	VFNMADD231PD ln2hi<>(SB), Y3, Y1
	VFNMADD231PD ln2lo<>(SB), Y3, Y1
	VMOVUPD c12<>(SB), Y4
	VFMADD213PD c11<>(SB), Y1, Y4
	VFMADD213PD c10<>(SB), Y1, Y4
	VFMADD213PD c9<>(SB), Y1, Y4
	VFMADD213PD c8<>(SB), Y1, Y4
	VFMADD213PD c7<>(SB), Y1, Y4
	VFMADD213PD c6<>(SB), Y1, Y4
	VFMADD213PD c5<>(SB), Y1, Y4
	VFMADD213PD c4<>(SB), Y1, Y4
	VFMADD213PD c3<>(SB), Y1, Y4
	VFMADD213PD c2<>(SB), Y1, Y4
	VFMADD213PD one<>(SB), Y1, Y4
	VFMADD213PD one<>(SB), Y1, Y4
	VPSLLQ  $52, Y2, Y2
	VPADDQ  Y2, Y4, Y4
	VCMPPD  $1, Y12, Y0, Y5
	VANDNPD Y4, Y5, Y4 // k

	VFMADD231PD (DI), Y4, Y11 // lanes += k u
	VMOVUPD     (DX), Y6
	VFMADD231PD Y14, Y4, Y6 // acc += k v
	VMOVUPD     Y6, (DX)
	ADDQ        $32, SI
	ADDQ        $32, DI
	ADDQ        $32, DX
	DECQ        CX
	JNZ         rloop

rdone:
	VMOVUPD Y11, (R11)
	VZEROUPPER
	RET

// func dtanhAVX2(d, a *float64, n int)
TEXT ·dtanhAVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $2, CX
	JZ   dtdone
	VMOVUPD one<>(SB), Y3

dtloop:
	VMOVUPD      (SI), Y0
	VMOVAPD      Y3, Y1
	VFNMADD231PD Y0, Y0, Y1 // 1 - a^2
	VMULPD       (DI), Y1, Y1
	VMOVUPD      Y1, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          dtloop

dtdone:
	VZEROUPPER
	RET
