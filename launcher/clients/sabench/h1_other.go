//go:build !unix

package sabench

import "context"

// h1Client exists on unix only (it reads the socket through its raw file
// descriptor); elsewhere net/http carries every request.
type h1Client struct{}

func newH1Client(string, string, [][2]string) *h1Client         { return nil }
func (c *h1Client) request(body []byte) []byte                  { return body }
func (c *h1Client) closeIdle()                                  {}
func (c *h1Client) do(context.Context, []byte, *streamRecorder) {}
