package mom

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/gopbs/gopbs/internal/asuser"
)

// A script the mom writes is executed while it forks other jobs'
// shepherds: none of those children may hold the script open for
// writing, or its exec fails with "text file busy". Several goroutines
// write and run scripts at once, as a start request's jobs do.
func TestScriptsNeverTextFileBusy(t *testing.T) {
	t.Parallel()
	usr, err := asuser.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var busy int
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				p := filepath.Join(dir, fmt.Sprintf("s%d.%d", g, i))
				if err := writeOwned(p, []byte("#!/bin/sh\nexit 0\n"), 0o700, usr); err != nil {
					t.Error(err)
					return
				}
				if err := exec.Command(p).Run(); errors.Is(err, syscall.ETXTBSY) {
					mu.Lock()
					busy++
					mu.Unlock()
				} else if err != nil {
					t.Error(err)
				}
				os.Remove(p)
			}
		}()
	}
	wg.Wait()
	if busy > 0 {
		t.Errorf("%d of 1200 scripts could not be executed: text file busy", busy)
	}
}
