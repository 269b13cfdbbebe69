//go:build unix && (!linux || 386)

package sabench

import (
	"syscall"
	"time"
	"unsafe"
)

// h1RX is empty outside Linux (and on linux/386, whose recvmsg goes
// through socketcall): the arrival is the moment the read returns.
type h1RX struct {
	read int64 // when the last recv returned (Unix ns)
}

func enableRXStamps(uintptr) error { return nil }

// recv reads the non-blocking socket without telling the scheduler: the
// read never blocks, and syscall.Read's entersyscall wakes the runtime's
// monitor thread on every call — per token.
func (x *h1RX) recv(fd uintptr, b []byte) (int, time.Time, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	now := time.Now()
	if errno != 0 {
		return 0, now, errno
	}
	x.read = now.UnixNano()
	return int(n), now, nil
}
