package accounting

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	at := time.Date(2024, 12, 21, 17, 58, 9, 0, time.Local)
	got := Format(at, Queued, "112461.torque1", []KV{{"user", "vchlum"}, {"queue", "workq"}, {"jobname", "my job"}, {"Resource_List.ncpus", "2"}})
	want := `12/21/2024 17:58:09;Q;112461.torque1;user=vchlum queue=workq jobname="my job" Resource_List.ncpus=2 ` + "\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestWriteDaily(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2024, 1, 1, 23, 59, 59, 0, time.Local)
	day2 := day1.Add(2 * time.Second)
	w.Write(day1, Queued, "1.s", []KV{{"queue", "workq"}})
	w.Write(day2, Deleted, "1.s", []KV{{"requestor", "root@s"}})
	w.Close()
	for _, f := range []string{"20240101", "20240102"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(b) == 0 {
			t.Errorf("%s: %q %v", f, b, err)
		}
	}
}
