package sandbox

// readOnly is what of spec.ReadOnly the command gets, resolved. Nothing
// when commands run as another user given by -sandbox-user: bwrap then
// runs as that user, who cannot reach the worker's private state
// directory, and would fail to start the command at all; the run reads
// its outputs with the file tools instead. A root worker's own default
// user gets them through idmapped read-only mounts (idmap.go).
func (s *Sandbox) readOnly(spec Spec) []string {
	if s.runAs != nil && s.idmap == nil {
		return nil
	}
	return existing(spec.ReadOnly)
}
