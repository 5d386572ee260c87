// Package syncbuf holds a byte buffer that one goroutine may write while
// another reads it: a child process's output written from its pipe, a
// logger's lines read by a test.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer under a lock. Past Max bytes (0: no limit)
// further writes are dropped, so a chatty process can't fill memory.
type Buffer struct {
	Max int

	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Max > 0 && b.buf.Len() > b.Max {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
