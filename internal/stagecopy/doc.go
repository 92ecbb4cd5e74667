// Package stagecopy makes the copies of file staging (qsub -W stagein,
// -W stageout). The copies are made by the mom of the job's first node:
// by its shepherd around the script for a run, by the mom itself for an
// early stage-in (the scheduler's stage-in request). Every file is
// opened, created, renamed and removed with the job owner's credentials
// (asuser.Run), never through a shell, and a file is written to a temporary name beside its destination and renamed into
// place, so a failed copy never leaves half a file under the real name;
// that name is recorded in mom_priv/partials first, so that a copy cut
// short with its process leaves nothing behind once the mom restarts
// (partials.go). A source must be a regular file (openSource), and every
// step of a copy is bounded by the stage timeout (boundedFile, the
// connections' deadlines), so neither a file nor a peer can hold a copy,
// or the mom serving it, forever.
//
// A file on another node is read or written by that node's mom over the
// authenticated mom-to-mom channel (the cluster key), in chunks, as the
// job's owner there too, and only with the server's token for that job,
// owner, direction and path (proto.StageToken). A host that runs no mom
// is copied with scp -B when mom_priv/config names it ($rcpcmd).
//
// Who calls: a job's shepherd copies its job's files with a Stager;
// pbs_mom copies an early stage-in with
// one, serves another mom's request with SendFile or ReceiveFile once it
// has checked the server's token, and calls RecoverPartials at start.
package stagecopy
