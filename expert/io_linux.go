//go:build linux

package expert

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// directFile reads with pread on a descriptor opened with O_DIRECT.
type directFile struct{ fd int }

// openDirect opens path with O_DIRECT and probes one aligned read at off, since some
// filesystems accept the flag and then refuse the reads (EINVAL).
func openDirect(path string, off int64) (*directFile, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s with O_DIRECT: %w", path, err)
	}
	d := &directFile{fd}
	buf, err := allocAligned(Align)
	if err == nil {
		_, err = d.ReadAt(buf, alignDown(off, Align))
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("O_DIRECT read of %s: %w", path, err)
	}
	return d, nil
}

func (d *directFile) ReadAt(p []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(d.fd, p, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (d *directFile) Close() error { return unix.Close(d.fd) }

// fadviseDontNeed tells the kernel the pages just read will not be needed again.
func fadviseDontNeed(fd uintptr, off, n int64) {
	_ = unix.Fadvise(int(fd), off, n, unix.FADV_DONTNEED)
}
