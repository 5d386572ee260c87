package localtime

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

//go:generate sh refresh.sh

// The zone database is the IANA release the build carries, copied from the
// Go toolchain by refresh.sh, never the host's: time.LoadLocation reads the
// host's zoneinfo (or $ZONEINFO) first, so two hosts, or two images built a
// month apart, would turn one local time into two instants.
var (
	//go:embed zoneinfo.zip
	zoneinfoZip []byte
	//go:embed zoneinfo.version
	zoneinfoVersion string
)

// Version is the IANA release of the zone rules in use, e.g. "2026c". A
// booking records it beside the local time it promised.
func Version() string { return strings.TrimSpace(zoneinfoVersion) }

// database indexes the embedded zip once; it is immutable, like the
// time/tzdata data it copies.
var database = sync.OnceValues(func() (map[string]*zip.File, error) {
	r, err := zip.NewReader(bytes.NewReader(zoneinfoZip), int64(len(zoneinfoZip)))
	if err != nil {
		return nil, fmt.Errorf("read zone database %s: %w", Version(), err)
	}
	files := make(map[string]*zip.File, len(r.File))
	for _, f := range r.File {
		files[f.Name] = f
	}
	return files, nil
})

// zones memoises LoadZone: every commit resolves its property's zone, and
// Locations are immutable, so sharing them is safe; the set of zones is
// small and bounded by the database.
var zones sync.Map // zone name → *time.Location

// LoadZone is the one place a zone is resolved. It loads an IANA zone from
// the build's database, rejecting the empty name and "Local", which would
// mean UTC or the server's own zone.
func LoadZone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("%w: %q", ErrUnknownZone, name)
	}
	files, err := database()
	if err != nil {
		return nil, err
	}
	f, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownZone, name)
	}
	loc, err := loadFile(name, f)
	if err != nil {
		return nil, fmt.Errorf("load zone %q from %s: %w", name, Version(), err)
	}
	zones.Store(name, loc)
	return loc, nil
}

func loadFile(name string, f *zip.File) (*time.Location, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	return time.LoadLocationFromTZData(name, data)
}
