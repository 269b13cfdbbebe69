//go:build linux && !386

package sabench

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestRXStampIsArrival: bytes that wait in the socket are dated when they
// arrived, not when the client read them (the loopback write delivers them
// before it returns, so they are in the socket before the sleep starts).
func TestRXStampIsArrival(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = enableRXStamps(fd) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}

	// The first socket to ask turns stamping on in a deferred kernel work
	// item, so the first bytes may come unstamped (recv then dates them
	// when it returns): send until the kernel stamps one.
	const wait = 50 * time.Millisecond
	var rx h1RX
	buf := make([]byte, 64)
	for i := 0; ; i++ {
		msg := fmt.Sprintf("message %d", i)
		if _, err := s.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		time.Sleep(wait)
		var n int
		var at time.Time
		err = rc.Read(func(fd uintptr) bool {
			n, at, err = rx.recv(fd, buf)
			return !errors.Is(err, syscall.EAGAIN)
		})
		read := time.Now()
		if err != nil || string(buf[:n]) != msg {
			t.Fatalf("read %q, %v; want %q", buf[:n], err, msg)
		}
		if rx.stamp() == 0 {
			if i == 20 {
				t.Fatal("no SCM_TIMESTAMPNS with the data after 20 messages")
			}
			continue
		}
		if at.After(sent) || read.Sub(at) < wait {
			t.Errorf("dated %v after the write and %v before the read; want at or before the write and ≥ %v before the read",
				at.Sub(sent), read.Sub(at), wait)
		}
		return
	}
}
