package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// entry is one file of an archive: its name there, where it is read from, its mode.
type entry struct {
	name, path string
	mode       int64
}

// writeTarGz writes files, in their order, as a gzipped tar dated when and
// owned by root: the same files give the same bytes.
func writeTarGz(path string, files []entry, when time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	z := gzip.NewWriter(f)
	tw := tar.NewWriter(z)
	for _, e := range files {
		b, err := os.ReadFile(e.path)
		if err != nil {
			return fmt.Errorf("reading %s: %w", e.path, err)
		}
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(b)), ModTime: when, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
			Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("writing %s into %s: %w", e.name, path, err)
		}
		if _, err := tw.Write(b); err != nil {
			return fmt.Errorf("writing %s into %s: %w", e.name, path, err)
		}
	}
	if err := errors.Join(tw.Close(), z.Close()); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeZip writes files, in their order, as a zip dated when.
func writeZip(path string, files []entry, when time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	zw := zip.NewWriter(f)
	for _, e := range files {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: when}
		h.SetMode(os.FileMode(e.mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("writing %s into %s: %w", e.name, path, err)
		}
		if err := copyFile(w, e.path); err != nil {
			return fmt.Errorf("writing %s into %s: %w", e.name, path, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func copyFile(w io.Writer, path string) (err error) {
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	_, err = io.Copy(w, r)
	return err
}
