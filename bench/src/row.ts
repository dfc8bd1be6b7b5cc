/** One line of the table: ours against a peer, measured in the same process and run. */
export interface Row {
  /** 1–6: the table against the peers; S1–S3: scaling; W1–W3: the wins of issue #15, before and after. */
  id: number | string
  name: string
  workload: string
  method: string
  ours: string
  peer: string
  ratio: string
  goal: string
  /** Whether the goal is met on this run; `null` for a goal this run cannot judge (smoke sizes). */
  met: boolean | null
  /** The count goals (rows 2–4) that `--smoke` asserts; timings never fail a run. */
  counts?: { label: string; ok: boolean }[]
}

export interface Sizes {
  smoke: boolean
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  rate: (n: number) =>
    n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(0)} k` : n.toFixed(0),
  ms: (n: number) => (n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(1)} ms`),
  x: (n: number) => `${n.toFixed(2)}×`,
  kb: (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`,
  mb: (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`,
}
