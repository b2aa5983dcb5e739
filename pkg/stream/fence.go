package stream

import (
	"errors"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// fence is what a fenced Publisher knows of one subject.
type fence struct {
	// last is the stream sequence of the subject's last message as far as
	// the Publisher knows (0: none): the next event of the subject is
	// stored only if it still is.
	last uint64
	// gen advances on every Expect and every conflict of the subject: an
	// event published under an older generation was decided on what is no
	// longer known to be true, and fails with ErrConflict unsent.
	gen uint64
}

// Expect tells a fenced Publisher that the last message of subject has
// stream sequence seq (0: the subject has no message), as read from the
// stream (LastPerSubject, or the last message after an ErrConflict). Events
// of subject published before the call and not yet sent fail with
// ErrConflict without being sent, as they were decided before what the call
// says was known. Without WithFencing it does nothing.
func (p *Publisher) Expect(subject string, seq uint64) {
	if !p.cfg.fenced {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fenceOf(subject)
	f.last = seq
	f.gen++
}

// ExpectEmpty tells a fenced Publisher that the stream was deleted and
// created again: no subject has a message any more (until Expect says
// otherwise), so the next event of each subject expects none. Events
// published before the call and not yet sent fail with ErrConflict without
// being sent. Without WithFencing it does nothing.
func (p *Publisher) ExpectEmpty() {
	if !p.cfg.fenced {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.fences {
		f.last = 0
		f.gen++
	}
}

// fenceOf is the fence of subject, created on first use. Callers hold p.mu.
func (p *Publisher) fenceOf(subject string) *fence {
	f, ok := p.fences[subject]
	if !ok {
		f = &fence{}
		p.fences[subject] = f
	}
	return f
}

// fenceGen is the current generation of subject's fence, 0 for a Publisher
// without fencing. Callers hold p.mu.
func (p *Publisher) fenceGen(subject string) uint64 {
	if !p.cfg.fenced {
		return 0
	}
	return p.fenceOf(subject).gen
}

// arm sets the expected last subject sequence of a fenced Publisher's
// event, just before its first attempt (its retries keep it), or returns
// ErrConflict when its subject's fence moved on since it was published.
func (p *Publisher) arm(it *pubItem) error {
	if !p.cfg.fenced {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fenceOf(it.msg.Subject)
	if it.gen != f.gen {
		return ErrConflict
	}
	it.msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(f.last, 10))
	return nil
}

// acked records the sequence of a fenced Publisher's stored event as the
// last of its subject, unless the fence moved on meanwhile.
func (p *Publisher) acked(it *pubItem) {
	if !p.cfg.fenced {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.fenceOf(it.msg.Subject); it.gen == f.gen {
		f.last = it.ev.Sequence
	}
}

// conflicted advances the fence of a subject whose event the stream
// refused: the events queued behind it fail unsent.
func (p *Publisher) conflicted(it *pubItem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.fenceOf(it.msg.Subject); it.gen == f.gen {
		f.gen++
	}
}

// fenceHeaderSize is the most the expected sequence header adds to a
// message of a fenced Publisher (arm sets it after the size check).
func (p *Publisher) fenceHeaderSize() int {
	if !p.cfg.fenced {
		return 0
	}
	return len(jetstream.ExpectedLastSubjSeqHeader) + len(": \r\n") + len("18446744073709551615")
}

// conflict reports whether the stream refused a message because the last
// message of its subject was not the expected one (code 10164 on a
// replicated stream).
func conflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
