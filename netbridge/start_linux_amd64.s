//go:build !cgo

#include "go_asm.h"
#include "textflag.h"

// The bridge's well-formed call, `-send FD PORT [-unset NAME] -- COMMAND
// ARGS...`, runs here, before the Go runtime starts: starting the runtime
// and ending it in the exec was most of the bridge's cost. Anything else
// (-lifeline, usage errors, a port above 65535) starts the Go program,
// which handles it as netbridge.Main does everywhere else.
//
// The hook is the runtime's _cgo_init: rt0_go (runtime/asm_amd64.s) calls
// it, when set, with nothing done but the g0 stack bounds and CPUID; a
// program without cgo has it nil (runtime/cgo.go), and a defined symbol
// takes the place of the runtime's zero one, as runtime/cgo's does. So no
// linker flag is needed; the build tag keeps it out of cgo builds. What
// the runtime's start did for the command (checkfds, copyenv, initsig)
// is done here too. It leans on rt0_go's frame and runtime internals of
// Go 1.26: TestBuiltBridgeDoesWhatMainDoes (internal/sandbox/netbridge)
// compares this bridge with the Go one, to catch a release that moves them.
DATA _cgo_init+0(SB)/8, $bridge<>(SB)
GLOBL _cgo_init(SB), NOPTR, $8

DATA sendopt<>+0(SB)/8, $"-send\x00\x00\x00"
GLOBL sendopt<>(SB), RODATA, $8
DATA unsetopt<>+0(SB)/8, $"-unset\x00\x00"
GLOBL unsetopt<>(SB), RODATA, $8
DATA dashdash<>+0(SB)/8, $"--\x00\x00\x00\x00\x00\x00"
GLOBL dashdash<>(SB), RODATA, $8
DATA pathvar<>+0(SB)/8, $"PATH=\x00\x00\x00"
GLOBL pathvar<>(SB), RODATA, $8
DATA defpath<>+0(SB)/8, $"/usr/loc"
DATA defpath<>+8(SB)/8, $"al/bin:/"
DATA defpath<>+16(SB)/8, $"usr/bin:"
DATA defpath<>+24(SB)/8, $"/bin\x00\x00\x00\x00"
GLOBL defpath<>(SB), RODATA, $32
DATA devnull<>+0(SB)/8, $"/dev/nul"
DATA devnull<>+8(SB)/8, $"l\x00\x00\x00\x00\x00\x00\x00"
GLOBL devnull<>(SB), RODATA, $16
DATA one<>+0(SB)/4, $1
GLOBL one<>(SB), RODATA, $4

// sockaddr_in for 127.0.0.1; the port goes in at +2, in network order.
DATA addr<>+0(SB)/2, $2
DATA addr<>+4(SB)/4, $0x0100007f
GLOBL addr<>(SB), NOPTR, $16

// The msghdr that sends one zero byte and the listener (cmsg<>+16).
DATA iov<>+0(SB)/8, $zero<>(SB)
DATA iov<>+8(SB)/8, $1
GLOBL iov<>(SB), NOPTR, $16
GLOBL zero<>(SB), NOPTR, $8
DATA cmsg<>+0(SB)/8, $20 // CMSG_LEN(4)
DATA cmsg<>+8(SB)/4, $1  // SOL_SOCKET
DATA cmsg<>+12(SB)/4, $1 // SCM_RIGHTS
GLOBL cmsg<>(SB), NOPTR, $24
DATA msghdr<>+16(SB)/8, $iov<>(SB)
DATA msghdr<>+24(SB)/8, $1
DATA msghdr<>+32(SB)/8, $cmsg<>(SB)
DATA msghdr<>+40(SB)/8, $24 // CMSG_SPACE(4)
GLOBL msghdr<>(SB), NOPTR, $56

GLOBL envp<>(SB), NOPTR, $8
GLOBL sigaction<>(SB), NOPTR, $32
GLOBL sigdefault<>(SB), RODATA, $32
GLOBL path<>(SB), NOPTR, $4096
GLOBL msgiov<>(SB), NOPTR, $96 // six iovecs
GLOBL digits<>(SB), NOPTR, $24

// bridge is called by rt0_go: argc is at 32(SP) and argv at 40(SP), its
// frame's 24(SP) and 32(SP) above the return address. It returns never:
// it executes the command, exits, or starts the runtime from the top.
TEXT bridge<>(SB), NOSPLIT|NOFRAME, $0
	MOVQ 32(SP), R13 // argc
	MOVQ 40(SP), R12 // argv, until the first system call
	LEAQ 8(R12)(R13*8), AX
	MOVQ AX, envp<>(SB)
	LEAQ 8(R12), R14 // args: argv[1:]
	MOVQ R13, R15
	DECQ R15         // len(args)
	XORQ BX, BX      // the variable to unset
	LEAQ 24(R14), R11 // &args[3], "--" unless it is -unset
	CMPQ R15, $5
	JLE  parsed
	MOVQ 24(R14), SI
	LEAQ unsetopt<>(SB), DI
	CALL cstreq<>(SB)
	TESTQ AX, AX
	JZ   parsed
	MOVQ 32(R14), BX
	SUBQ $2, R15
	ADDQ $16, R11

parsed:
	CMPQ R15, $5
	JLT  gostart
	MOVQ 0(R14), SI
	LEAQ sendopt<>(SB), DI
	CALL cstreq<>(SB)
	TESTQ AX, AX
	JZ   gostart
	MOVQ 0(R11), SI
	LEAQ dashdash<>(SB), DI
	CALL cstreq<>(SB)
	TESTQ AX, AX
	JZ   gostart
	ADDQ $8, R11 // the command's argv
	MOVQ 8(R14), SI
	CALL atoi<>(SB)
	TESTQ DX, DX
	JZ   gostart
	CMPQ AX, $3
	JLT  gostart
	MOVQ AX, R13 // the socket the listener goes to
	MOVQ 16(R14), SI
	CALL atoi<>(SB)
	TESTQ DX, DX
	JZ   gostart
	CMPQ AX, $0xffff
	JA   gostart // Go's bind fails it with EINVAL
	ROLW $8, AX
	MOVW AX, addr<>+2(SB)
	MOVQ R11, R14

	// Standard descriptors left closed get /dev/null, as the runtime's
	// checkfds gives them; should that fail, the runtime fails it too.
	XORQ R15, R15

stdfd:
	MOVQ $72, AX // fcntl(fd, F_GETFD)
	MOVQ R15, DI
	MOVQ $1, SI
	SYSCALL
	CMPQ AX, $-9 // EBADF
	JNE  stdopen
	MOVQ $2, AX // open("/dev/null", O_RDWR)
	LEAQ devnull<>(SB), DI
	MOVQ $2, SI
	XORQ DX, DX
	SYSCALL
	CMPQ AX, R15
	JNE  gostart

stdopen:
	CMPQ AX, $-4095
	JHI  gostart
	INCQ R15
	CMPQ R15, $3
	JLT  stdfd

	// socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, 0)
	MOVQ $41, AX
	MOVQ $2, DI
	MOVQ $0x80001, SI
	XORQ DX, DX
	SYSCALL
	CMPQ AX, $-4095
	JLS  socketok
	LEAQ ·socketFailed(SB), R8
	JMP  bridgefailed

socketok:
	MOVQ AX, R12 // the listener
	// setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, 4)
	MOVQ $54, AX
	MOVQ R12, DI
	MOVQ $1, SI
	MOVQ $2, DX
	LEAQ one<>(SB), R10
	MOVQ $4, R8
	SYSCALL
	CMPQ AX, $-4095
	JHI  listenfailed
	// setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, 4)
	MOVQ $54, AX
	MOVQ R12, DI
	XORQ SI, SI
	MOVQ $15, DX
	LEAQ one<>(SB), R10
	MOVQ $4, R8
	SYSCALL
	CMPQ AX, $-4095
	JHI  listenfailed
	// bind(fd, &addr, 16)
	MOVQ $49, AX
	MOVQ R12, DI
	LEAQ addr<>(SB), SI
	MOVQ $16, DX
	SYSCALL
	CMPQ AX, $-4095
	JHI  listenfailed
	// listen(fd, SOMAXCONN)
	MOVQ $50, AX
	MOVQ R12, DI
	MOVQ $128, SI
	SYSCALL
	CMPQ AX, $-4095
	JHI  listenfailed
	// sendmsg(sock, &msghdr, 0)
	MOVL R12, cmsg<>+16(SB)
	MOVQ $46, AX
	MOVQ R13, DI
	LEAQ msghdr<>(SB), SI
	XORQ DX, DX
	SYSCALL
	MOVQ AX, R15
	MOVQ $3, AX // close(fd)
	MOVQ R12, DI
	SYSCALL
	MOVQ $3, AX // close(sock): not the command's
	MOVQ R13, DI
	SYSCALL
	MOVQ R15, AX
	CMPQ AX, $-4095
	JLS  sent
	LEAQ ·sendFailed(SB), R8
	JMP  bridgefailed

listenfailed:
	MOVQ AX, R15
	MOVQ $3, AX
	MOVQ R12, DI
	SYSCALL
	MOVQ R15, AX
	LEAQ ·listenFailed(SB), R8

bridgefailed: // AX: -errno; R8: the failed call's Go string
	MOVQ ·bridgeFailed+0(SB), CX
	MOVQ CX, msgiov<>+0(SB)
	MOVQ ·bridgeFailed+8(SB), CX
	MOVQ CX, msgiov<>+8(SB)
	MOVQ 0(R8), CX
	MOVQ CX, msgiov<>+16(SB)
	MOVQ 8(R8), CX
	MOVQ CX, msgiov<>+24(SB)
	MOVQ $0, msgiov<>+40(SB)
	NEGQ AX
	MOVQ $126, R10
	JMP  die<>(SB)

sent:
	// The environment without empty entries, later mentions of a key
	// and NAME=..., as syscall's copyenv, Unsetenv and Environ leave it.
	MOVQ envp<>(SB), SI
	MOVQ SI, DI

filter:
	MOVQ 0(SI), AX
	TESTQ AX, AX
	JZ   filtered
	ADDQ $8, SI
	CMPB 0(AX), $0
	JEQ  filter
	TESTQ BX, BX
	JZ   keep
	MOVQ AX, R8
	MOVQ BX, R9

prefix:
	MOVBLZX 0(R9), CX
	TESTB CX, CX
	JZ   nameend
	CMPB 0(R8), CX
	JNE  keep
	INCQ R8
	INCQ R9
	JMP  prefix

nameend:
	CMPB 0(R8), $'='
	JNE  keep
	CMPQ R9, BX
	JNE  filter // NAME=...: dropped (an empty NAME drops nothing)

keep:
	MOVQ envp<>(SB), R10

kept: // is AX's key among those kept, [envp, DI)?
	CMPQ R10, DI
	JEQ  store
	MOVQ 0(R10), R8
	ADDQ $8, R10
	MOVQ AX, R9

samekey:
	MOVB 0(R9), CX
	CMPB CX, 0(R8)
	JNE  kept
	CMPB CX, $'='
	JEQ  filter // a later mention: dropped
	TESTB CX, CX
	JZ   store  // no key
	INCQ R8
	INCQ R9
	JMP  samekey

store:
	MOVQ AX, 0(DI)
	ADDQ $8, DI
	JMP  filter

filtered:
	MOVQ $0, 0(DI)

	// The runtime's initsig takes over the signals it handles (all but
	// SIGHUP and SIGINT when ignored, the job control ones, 32 and 34),
	// and the exec leaves those at their default: so does the bridge
	// with those it was started ignoring.
	MOVQ $0xfffffffd7fc1fefc, R13 // bit N-1: signal N
	MOVQ $1, R12

signal:
	BTQ  $0, R13
	JCC  nextsignal
	MOVQ $13, AX // rt_sigaction(sig, NULL, &sigaction, 8)
	MOVQ R12, DI
	XORQ SI, SI
	LEAQ sigaction<>(SB), DX
	MOVQ $8, R10
	SYSCALL
	CMPQ sigaction<>(SB), $1 // SIG_IGN
	JNE  nextsignal
	MOVQ $13, AX // rt_sigaction(sig, &SIG_DFL, NULL, 8)
	MOVQ R12, DI
	LEAQ sigdefault<>(SB), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL

nextsignal:
	SHRQ $1, R13
	INCQ R12
	TESTQ R13, R13
	JNZ  signal

	// A command named with a slash is executed as it is.
	MOVQ 0(R14), BX
	MOVQ BX, SI

slash:
	MOVB 0(SI), CX
	TESTB CX, CX
	JZ   search
	INCQ SI
	CMPB CX, $'/'
	JNE  slash
	MOVQ $59, AX
	MOVQ BX, DI
	MOVQ R14, SI
	MOVQ envp<>(SB), DX
	SYSCALL
	NEGQ AX
	JMP  execfailed

search:
	// Else the first entry of PATH (the first PATH=) that can be
	// executed, absolute entries only, as netbridge's execvp.
	LEAQ defpath<>(SB), R12
	MOVQ envp<>(SB), R8

findpath:
	MOVQ 0(R8), SI
	TESTQ SI, SI
	JZ   pathfound
	ADDQ $8, R8
	MOVL 0(SI), CX
	CMPL CX, pathvar<>(SB)
	JNE  findpath
	CMPB 4(SI), $'='
	JNE  findpath
	LEAQ 5(SI), R12

pathfound:
	XORQ R15, R15 // EACCES seen

entry: // R12: an entry's start
	MOVQ R12, R13

entryend:
	MOVB 0(R13), CX
	TESTB CX, CX
	JZ   gotentry
	CMPB CX, $':'
	JEQ  gotentry
	INCQ R13
	JMP  entryend

gotentry: // [R12, R13)
	CMPQ R13, R12
	JEQ  nextentry
	CMPB 0(R12), $'/'
	JNE  nextentry
	LEAQ path<>(SB), DI
	LEAQ path<>+4094(SB), R9 // room for '/' and NUL
	MOVQ R12, SI

copydir:
	CMPQ SI, R13
	JEQ  copiedDir
	CMPQ DI, R9
	JAE  nextentry // longer than PATH_MAX: ENAMETOOLONG
	MOVB 0(SI), CX
	MOVB CX, 0(DI)
	INCQ SI
	INCQ DI
	JMP  copydir

copiedDir:
	MOVB $'/', 0(DI)
	INCQ DI
	MOVQ BX, SI

copyname:
	CMPQ DI, R9
	JA   nextentry
	MOVB 0(SI), CX
	MOVB CX, 0(DI)
	INCQ SI
	INCQ DI
	TESTB CX, CX
	JNZ  copyname
	MOVQ $59, AX
	LEAQ path<>(SB), DI
	MOVQ R14, SI
	MOVQ envp<>(SB), DX
	SYSCALL
	NEGQ AX
	CMPQ AX, $2 // ENOENT
	JEQ  nextentry
	CMPQ AX, $20 // ENOTDIR
	JEQ  nextentry
	CMPQ AX, $40 // ELOOP
	JEQ  nextentry
	CMPQ AX, $36 // ENAMETOOLONG
	JEQ  nextentry
	CMPQ AX, $13 // EACCES
	JNE  execfailed
	MOVQ $1, R15

nextentry:
	CMPB 0(R13), $0
	JEQ  notfound
	LEAQ 1(R13), R12
	JMP  entry

notfound:
	MOVQ $2, AX
	TESTQ R15, R15
	JZ   execfailed
	MOVQ $13, AX

execfailed: // AX: errno; BX: the command's name
	MOVQ ·execFailed+0(SB), CX
	MOVQ CX, msgiov<>+0(SB)
	MOVQ ·execFailed+8(SB), CX
	MOVQ CX, msgiov<>+8(SB)
	MOVQ BX, msgiov<>+16(SB)
	MOVQ BX, SI

namelen:
	CMPB 0(SI), $0
	JEQ  namedone
	INCQ SI
	JMP  namelen

namedone:
	SUBQ BX, SI
	MOVQ SI, msgiov<>+24(SB)
	MOVQ ·colon+0(SB), CX
	MOVQ CX, msgiov<>+32(SB)
	MOVQ ·colon+8(SB), CX
	MOVQ CX, msgiov<>+40(SB)
	MOVQ $127, R10
	JMP  die<>(SB)

gostart:
	// Not the bridge's call: start the Go program from the top, as if
	// there were no hook; the runtime then sets up TLS itself.
	MOVQ $0, _cgo_init(SB)
	LEAQ -8(R12), SP
	JMP  _rt0_amd64(SB)

// die writes msgiov<>'s first three parts, AX's errno text and a newline
// to standard error and exits with R10.
TEXT die<>(SB), NOSPLIT|NOFRAME, $0
	CMPQ AX, $const_errnoTexts
	JAE  number
	MOVQ AX, CX
	SHLQ $4, CX
	LEAQ ·errnoText(SB), DX
	ADDQ CX, DX
	MOVQ 8(DX), CX
	TESTQ CX, CX
	JZ   number
	MOVQ CX, msgiov<>+56(SB)
	MOVQ 0(DX), CX
	MOVQ CX, msgiov<>+48(SB)
	MOVQ $0, msgiov<>+72(SB)
	JMP  write

number:
	MOVQ ·errnoPrefix+0(SB), CX
	MOVQ CX, msgiov<>+48(SB)
	MOVQ ·errnoPrefix+8(SB), CX
	MOVQ CX, msgiov<>+56(SB)
	LEAQ digits<>+24(SB), DI
	MOVQ DI, R9
	MOVQ $10, CX

digit:
	XORQ DX, DX
	DIVQ CX
	ADDB $'0', DX
	DECQ DI
	MOVB DX, 0(DI)
	TESTQ AX, AX
	JNZ  digit
	MOVQ DI, msgiov<>+64(SB)
	SUBQ DI, R9
	MOVQ R9, msgiov<>+72(SB)

write:
	MOVQ ·newline+0(SB), CX
	MOVQ CX, msgiov<>+80(SB)
	MOVQ $1, msgiov<>+88(SB)
	MOVQ $20, AX // writev(2, msgiov, 6)
	MOVQ $2, DI
	LEAQ msgiov<>(SB), SI
	MOVQ $6, DX
	SYSCALL
	MOVQ $231, AX // exit_group
	MOVQ R10, DI
	SYSCALL
	INT  $3

// cstreq sets AX to 1 when the C strings at SI and DI are equal, else
// to 0. It changes CX and SI and DI.
TEXT cstreq<>(SB), NOSPLIT|NOFRAME, $0
next:
	MOVB 0(SI), CX
	CMPB CX, 0(DI)
	JNE  differ
	INCQ SI
	INCQ DI
	TESTB CX, CX
	JNZ  next
	MOVQ $1, AX
	RET

differ:
	XORQ AX, AX
	RET

// atoi reads the C string at SI as netbridge's atoi does: one to nine
// decimal digits. AX is the number; DX is 1 when it is one, else 0. It
// changes CX, SI and R8.
TEXT atoi<>(SB), NOSPLIT|NOFRAME, $0
	XORQ AX, AX
	XORQ DX, DX
	MOVQ SI, R8
	ADDQ $9, R8

more:
	MOVBLZX 0(SI), CX
	TESTB CX, CX
	JZ   end
	CMPQ SI, R8
	JAE  bad
	SUBB $'0', CX
	CMPB CX, $9
	JA   bad
	IMULQ $10, AX
	ADDQ CX, AX
	INCQ SI
	MOVQ $1, DX
	JMP  more

end:
	RET

bad:
	XORQ DX, DX
	RET
