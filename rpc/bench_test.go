package rpc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
)

// BenchmarkRoundTrip measures one small call (tools/call with a ~100-byte
// answer) answered through the full stack over kernel pipes, the kind of
// file an editor gives a child process as stdio.
func BenchmarkRoundTrip(b *testing.B) {
	for _, framing := range []Framing{FramingNDJSON, FramingHeader} {
		b.Run(framing.String(), func(b *testing.B) {
			cr, cw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			sr, sw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Serve(ctx, cr, sw, func(Client) Agent { return &fakeAgent{} }, Options{})
			}()
			fr := newFrameReader(sr, framing, 1<<20)
			send := func(body string) {
				if framing == FramingHeader {
					fmt.Fprintf(cw, "Content-Length: %d\r\n\r\n%s", len(body), body)
				} else {
					fmt.Fprintf(cw, "%s\n", body)
				}
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
			if _, err := fr.next(); err != nil {
				b.Fatal(err)
			}
			req := `{"jsonrpc":"2.0","id":1,"method":"_coding-agent/tools/call","params":{"name":"read","cwd":"/tmp","arguments":{"path":"a.txt"}}}`
			var frame []byte
			if framing == FramingHeader {
				frame = fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(req), req)
			} else {
				frame = []byte(req + "\n")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := cw.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := fr.next(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cw.Close()
			cancel()
			<-done
			sr.Close()
		})
	}
}

// BenchmarkPipelined measures throughput: the client writes b.N small
// calls without waiting while a reader collects the answers, so calls
// overlap the way a busy editor's do.
func BenchmarkPipelined(b *testing.B) {
	for _, framing := range []Framing{FramingNDJSON, FramingHeader} {
		b.Run(framing.String(), func(b *testing.B) {
			cr, cw, _ := os.Pipe()
			sr, sw, _ := os.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Serve(context.Background(), cr, sw, func(Client) Agent { return &fakeAgent{} }, Options{Framing: framing})
			}()
			frame := func(body string) []byte {
				if framing == FramingHeader {
					return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body)
				}
				return []byte(body + "\n")
			}
			fr := newFrameReader(sr, framing, 1<<20)
			cw.Write(frame(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
			if _, err := fr.next(); err != nil {
				b.Fatal(err)
			}
			req := frame(`{"jsonrpc":"2.0","id":1,"method":"_coding-agent/tools/call","params":{"name":"read","cwd":"/tmp","arguments":{"path":"a.txt"}}}`)
			b.ReportAllocs()
			b.ResetTimer()
			read := make(chan error, 1)
			busy := 0 // answers refused by the bound on calls in flight
			go func() {
				for i := 0; i < b.N; i++ {
					f, err := fr.next()
					if err != nil {
						read <- err
						return
					}
					if bytes.Contains(f, []byte(`"code":-32001`)) {
						busy++
					}
				}
				read <- nil
			}()
			for i := 0; i < b.N; i++ {
				if _, err := cw.Write(req); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-read; err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(busy)/float64(b.N), "busy/op")
			cw.Close()
			<-done
			sr.Close()
		})
	}
}
