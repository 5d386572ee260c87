package fakeserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Journal keeps a fake's file current across a crash of its process, not
// only a clean stop: each write through the API appends what it changed to
// a log beside the file (file + ".log"), and Load replays the log over the
// last snapshot. Appending the change rather than saving the whole state
// keeps a write's cost flat as the fake fills up: saving everything on
// every write was a third of the dev stack's CPU in the soak. Its owner's
// lock guards it.
type Journal struct {
	// staged are the changes since the journal last logged them.
	staged  []any
	File    string
	log     *os.File
	Seq     int64 // the last change logged, or replayed by Load
	saveErr error
}

// logLine is one change; Seq orders it against the snapshot's.
type logLine struct {
	Seq    int64           `json:"seq"`
	Change json.RawMessage `json:"change"`
}

// Stage notes a change a write made, under its owner's lock; Flush logs
// it. A write stages its change and flushes after it unlocked: whichever
// request flushes first logs the others' changes too, before any of them
// replies.
func (j *Journal) Stage(change any) {
	if j.File != "" {
		j.staged = append(j.staged, change)
	}
}

// Flush appends the staged changes to the log.
func (j *Journal) Flush() {
	for _, ch := range j.staged {
		j.written(ch)
	}
	j.staged = j.staged[:0]
}

// written appends change to the log.
func (j *Journal) written(change any) {
	if j.File == "" {
		return
	}
	if j.log == nil {
		f, err := os.OpenFile(j.File+".log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			j.saveErr = err
			return
		}
		j.log = f
	}
	data, err := json.Marshal(change)
	if err == nil {
		j.Seq++
		data, err = json.Marshal(logLine{Seq: j.Seq, Change: data})
	}
	if err == nil {
		_, err = j.log.Write(append(data, '\n'))
	}
	if err != nil {
		j.saveErr = err
	}
}

// Save writes a snapshot of state to path and reports any failed write
// before it. A snapshot of the journal's own file makes its log redundant:
// the log is emptied, and lines a crash leaves behind are older than the
// snapshot's seq, which Load skips.
func (j *Journal) Save(path string, state any) error {
	err := errors.Join(j.saveErr, SaveJSON(path, state))
	j.saveErr = nil
	if err == nil && path == j.File && j.log != nil {
		err = j.log.Truncate(0)
	}
	return err
}

// Replay applies the changes logged beside path after seq, in order. A
// torn last line (a crash mid-write) ends it, and is cut off, so that the
// next change appended is read by the next load rather than glued to it.
func (j *Journal) Replay(path string, seq int64, apply func(json.RawMessage) error) error {
	j.Seq = seq
	data, err := os.ReadFile(path + ".log")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	good := 0
	for good < len(data) {
		end := bytes.IndexByte(data[good:], '\n')
		var line logLine
		if end < 0 || json.Unmarshal(data[good:good+end], &line) != nil {
			break
		}
		if line.Seq > j.Seq {
			if err := apply(line.Change); err != nil {
				return err
			}
			j.Seq = line.Seq
		}
		good += end + 1
	}
	if good < len(data) {
		return os.Truncate(path+".log", int64(good))
	}
	return nil
}

// SaveJSON writes v to path atomically (write, then rename), so a crash
// mid-save leaves the previous state.
func SaveJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadJSON reads path into v; a missing file is an empty state.
func LoadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Kept is a fake the dev stack keeps across its restarts: Keep restores
// it from its file and journals each write beside it from then on; Save
// snapshots it.
type Kept interface {
	Keep(path string) error
	Save(path string) error
}

// Restore is a kept fake's Keep, under its owner's lock: it reads the
// snapshot at path into st (a missing file leaves st as it is), lets
// restore take it, replays each change logged after the snapshot's
// journal seq (*seq, once st is read), decoded as a C, through apply, and
// logs the writes to come beside path. what names the fake in errors.
func Restore[C any](j *Journal, path, what string, st any, seq *int64, restore func(), apply func(C)) error {
	if err := LoadJSON(path, st); err != nil {
		return fmt.Errorf("load %s %s: %w", what, path, err)
	}
	restore()
	err := j.Replay(path, *seq, func(raw json.RawMessage) error {
		var ch C
		if err := json.Unmarshal(raw, &ch); err != nil {
			return err
		}
		apply(ch)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load %s %s: %w", what, path, err)
	}
	j.File = path
	return nil
}
