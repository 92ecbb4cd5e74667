package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gopbs/gopbs/internal/model"
	"github.com/gopbs/gopbs/internal/store"
	"github.com/gopbs/gopbs/proto"
)

// importNodesFile creates the nodes of server_priv/nodes (model.NodesFile)
// that the store does not hold yet, in one commit, at start. A file with
// an error stops the server with every bad line named; a node the store
// already has keeps the store's definition (qmgr changes it), which the
// log says, so an edit to the file is never silently dropped.
func (s *Server) importNodesFile() error {
	path := filepath.Join(s.cfg.StorePath, model.NodesFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	lines, err := model.ParseNodesFile(f, path)
	if err != nil {
		return err
	}
	created := 0
	err = s.commit.Do(func(b *store.Batch) error {
		for _, nl := range lines {
			if _, exists := s.nodes.Get(nl.Name); exists {
				s.log.Info("nodes file: node already defined; the server's definition is kept (change it with qmgr)", "node", nl.Name, "file", path, "line", nl.Line)
				continue
			}
			req := &proto.ManagerRequest{Command: proto.MgrCreate, Object: proto.ObjNode, Name: nl.Name, Attrs: nl.Attrs}
			if err := s.nodeMgmt.Manage(b, req, s.nowUnix()); err != nil {
				return fmt.Errorf("%s:%d: %s: %w", path, nl.Line, nl.Name, err)
			}
			created++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if created > 0 {
		s.log.Info("nodes file: nodes created", "file", path, "created", created)
	}
	return nil
}
