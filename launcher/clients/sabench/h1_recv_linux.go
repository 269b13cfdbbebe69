//go:build linux && !386

package sabench

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

// On Linux a stream's bytes are stamped by the kernel when they reach the
// socket (SO_TIMESTAMPNS), and each read returns the stamp of the newest
// segment it copied. TTFT and ITL are then taken from the arrival, not
// from the moment this process got round to reading: at c2048 the first
// tokens of 2048 streams arrive while the client is still writing the last
// requests, and the runtime resumes a reader only once the runnable
// writers are done, which put milliseconds of the client's own scheduling
// into the first burst's TTFTs.

// h1RX is a connection's recvmsg state, kept with the connection so a
// read allocates nothing.
type h1RX struct {
	msg syscall.Msghdr
	iov syscall.Iovec
	oob [64]byte // one SCM_TIMESTAMPNS message (16-byte header + timespec)
	// read is when the last recv returned (Unix ns): the arrival stamp's
	// counterpart for the client-added latency's read distribution.
	read int64
}

// enableRXStamps asks the kernel to stamp the socket's incoming data.
func enableRXStamps(fd uintptr) error {
	if err := syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("enabling receive timestamps: %w", err)
	}
	return nil
}

// recv reads the non-blocking socket into b and returns when its newest
// byte arrived: the kernel's stamp, expressed on the monotonic clock as
// time.Now minus the time the bytes waited, or time.Now when the kernel
// gave none (the first socket to ask turns stamping on in a deferred
// kernel work item, so its first bytes may come unstamped). The raw syscall does not tell the scheduler: the read never
// blocks, and syscall.Syscall's entersyscall wakes the runtime's monitor
// thread (a futex) on every call — per token.
func (x *h1RX) recv(fd uintptr, b []byte) (int, time.Time, error) {
	x.iov.Base = &b[0]
	x.iov.SetLen(len(b))
	x.msg.Iov = &x.iov
	x.msg.Iovlen = 1
	x.msg.Control = &x.oob[0]
	x.msg.SetControllen(len(x.oob))
	n, _, errno := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&x.msg)), 0)
	now := time.Now()
	if errno != 0 {
		return 0, now, errno
	}
	x.read = now.UnixNano()
	if at := x.stamp(); at != 0 {
		if wait := x.read - at; wait > 0 {
			now = now.Add(-time.Duration(wait))
		}
	}
	return int(n), now, nil
}

// stamp is the SCM_TIMESTAMPNS value of the last recvmsg in Unix
// nanoseconds, 0 when there is none.
func (x *h1RX) stamp() int64 {
	const hdr = unsafe.Sizeof(syscall.Cmsghdr{})
	const need = uint64(hdr + unsafe.Sizeof(syscall.Timespec{}))
	if uint64(x.msg.Controllen) < need {
		return 0
	}
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&x.oob[0]))
	if h.Level != syscall.SOL_SOCKET || h.Type != syscall.SCM_TIMESTAMPNS || uint64(h.Len) < need {
		return 0
	}
	t := (*syscall.Timespec)(unsafe.Pointer(&x.oob[hdr]))
	return t.Nano()
}
