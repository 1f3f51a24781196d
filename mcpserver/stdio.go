package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport wraps the SDK's IOTransport with a line filter. The SDK
// reads stdio as one stream through one json.Decoder and ends the session
// (the process, for a host) on the first message it cannot read: a line
// that is not JSON, or JSON that is not JSON-RPC. The filter reads the
// input line by line, answers such a line itself with the JSON-RPC error
// (-32700 parse error, -32600 invalid request) and passes only lines the
// SDK reads to the SDK's transport, through a pipe; a line over
// MaxMessageBytes is skipped to its newline without being held. The SDK's
// connection is returned as it is, so that the session still tells it the
// negotiated protocol version (batches depend on it).
type stdioTransport struct {
	in  io.ReadCloser
	out io.WriteCloser
}

// Connect starts the filter and returns the SDK's connection over it.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	out := &lockedWriter{w: t.out}
	f := &lineFilter{in: bufio.NewReaderSize(t.in, 64<<10), sdk: pw, out: out}
	go f.run()
	// The filter bounds every line; the SDK's own bound is kept above it
	// as a second guard (a forwarded line carries its newline).
	sdk := &mcp.IOTransport{Reader: &pipeReader{pr, t.in}, Writer: out, MaxLineLength: MaxMessageBytes + 1<<10}
	return sdk.Connect(ctx)
}

// pipeReader is the SDK's side of the pipe. Closing it also closes the
// real input, so that the filter's blocked read ends with the session.
type pipeReader struct {
	*io.PipeReader
	in io.Closer
}

func (r *pipeReader) Close() error {
	r.PipeReader.Close()
	return r.in.Close()
}

// lockedWriter serializes the SDK's messages and the filter's errors, so
// that no two lines interleave. The SDK writes each message, newline
// included, in one Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lockedWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Close()
}

// lineFilter reads the client's lines and passes on the ones the SDK can
// read.
type lineFilter struct {
	in  *bufio.Reader
	sdk *io.PipeWriter
	out io.Writer
	buf []byte

	// noBatches is set once the client's initialize asks for a protocol
	// version without JSON-RPC batches, on which the SDK ends the session
	// at a batch.
	noBatches bool
	// batchIDs are the ids of the requests of forwarded batches (a
	// notification's is the empty id). The SDK ends the session at a
	// batch that reuses the id of a request of an earlier batch it has not
	// answered, and it never counts a notification as answered; refusing
	// any reuse keeps clear of both.
	batchIDs map[jsonrpc.ID]bool
}

// run filters until the input ends or the SDK closes its side.
func (f *lineFilter) run() {
	for {
		line, tooLong, err := f.next()
		if len(line) > 0 || tooLong {
			if !f.handle(line, tooLong) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			f.sdk.CloseWithError(err)
			return
		}
	}
}

// handle answers or forwards one line; false when the SDK's side is
// closed.
func (f *lineFilter) handle(line []byte, tooLong bool) bool {
	var reject *rpcError
	if tooLong {
		reject = tooLarge(MaxMessageBytes)
	} else if line = bytes.TrimSpace(line); len(line) == 0 {
		return true // a blank line is no message
	} else {
		reject = f.check(line)
	}
	if reject != nil {
		// A failed write of the answer is the output's failure: the SDK
		// meets it at its next write.
		_, _ = f.out.Write(append(reject.line(), '\n'))
		return true
	}
	// The line goes on trimmed: the SDK takes anything after a message
	// but its newline for trailing data, and ends the session.
	_, err := f.sdk.Write(append(line, '\n'))
	return err == nil
}

// check is checkMessage plus the rules the SDK applies to batches per
// session.
func (f *lineFilter) check(line []byte) *rpcError {
	msgs, batch, reject := checkMessage(line)
	if reject != nil {
		return reject
	}
	if batch {
		if f.noBatches {
			return invalidRequest(nil, "JSON-RPC batches are not part of the protocol version this session uses")
		}
		ids := map[jsonrpc.ID]bool{}
		for _, m := range msgs {
			req, ok := m.(*jsonrpc.Request)
			switch {
			case !ok:
			case ids[req.ID] && req.IsCall():
				return invalidRequest(nil, "the batch holds two requests with one id")
			case ids[req.ID]:
				return invalidRequest(nil, "the batch holds more than one notification")
			case f.batchIDs[req.ID] && req.IsCall():
				return invalidRequest(nil, "the batch reuses the id of a request of an earlier batch")
			case f.batchIDs[req.ID]:
				return invalidRequest(nil, "a notification came in an earlier batch; send this one on its own")
			}
			if ok {
				ids[req.ID] = true
			}
		}
		if f.batchIDs == nil {
			f.batchIDs = map[jsonrpc.ID]bool{}
		}
		for id := range ids {
			f.batchIDs[id] = true
		}
	}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" {
			f.noBatches = !batchesAllowed(req.Params)
		}
	}
	return nil
}

// batchesAllowed mirrors the SDK's version negotiation: the client's
// version when the SDK supports it, else a newer one, and batches only
// before 2025-06-18.
func batchesAllowed(params json.RawMessage) bool {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ProtocolVersion < "2025-06-18" && slices.Contains(mcp.SupportedProtocolVersions(), p.ProtocolVersion)
}

// next reads one line without its line break. A line over MaxMessageBytes
// is read to its end and dropped as it goes: tooLong is then true and line
// nil. err is the input's error (io.EOF at its end) after the last line.
func (f *lineFilter) next() (line []byte, tooLong bool, err error) {
	f.buf = f.buf[:0]
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			if len(f.buf)+len(chunk) > MaxMessageBytes+2 { // room for "\r\n"
				tooLong, f.buf = true, f.buf[:0]
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		line = bytes.TrimRight(f.buf, "\r\n")
		if len(line) > MaxMessageBytes {
			return nil, true, err
		}
		return line, false, err
	}
}
