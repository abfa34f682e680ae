"""What tests ask of a value's memory: where its CPU copy lives (to tell zero-copy from a copy)."""
import isthmus as q


def address(A):
    """The address of qvalue A's CPU memory (locked for reading and released again)."""
    p = A.lock(q.LOCK_READ, q.MEMRESOURCE_CPU)
    A.unlock(q.LOCK_READ, q.MEMRESOURCE_CPU)
    return p
