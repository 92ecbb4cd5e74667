package web

// live reports whether the page gets live updates (an event feed).
func (s *Server) live() bool { return false }
