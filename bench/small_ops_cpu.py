"""Per-call cost of small qvalue ops and zero-copy exchange, in CPU time of the calling thread.

Usage (after a build):  PYTHONPATH=build/python python3 bench/small_ops_cpu.py
Wall-clock timings of sub-microsecond calls are meaningless on a shared, loaded machine;
thread CPU time (best of 7 runs of 20000 calls) is not inflated by other processes, so two
builds can be compared side by side (run this with each build's PYTHONPATH). Not a test.
"""
import sys, time
import numpy as np, torch
import isthmus as q
q.init("cpu")
def best(f, inner=20000, reps=7):
    f(); ts=[]
    for _ in range(reps):
        t0=time.thread_time()
        for _ in range(inner): f()
        ts.append((time.thread_time()-t0)/inner)
    return min(ts)*1e6
a_np=np.random.rand(1000).astype(np.float32); b_np=np.random.rand(1000).astype(np.float32)
a,b=q.value(a_np),q.value(b_np)
t=torch.from_numpy(a_np.copy())
r={}
r['add1k q']=best(lambda: a+b)
r['add1k np']=best(lambda: a_np+b_np)
r['add scalar q']=best(lambda: a+1.0)
r['iadd q']=best(lambda: a.__iadd__(b))
r['from_dlpack(torch)']=best(lambda: q.from_dlpack(t))
r['torch.from_dlpack(q)']=best(lambda: torch.from_dlpack(a))
r['torch.from_numpy']=best(lambda: torch.from_numpy(a_np))
r['q.from_py(nd)']=best(lambda: q.from_py(a_np))
r['np.asarray(q)']=best(lambda: np.asarray(a))
r['q+torch']=best(lambda: a+t)
for k,v in r.items(): print(f"{k:24s} {v:7.3f} us")
