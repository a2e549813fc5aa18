"""The bucket planner (issue 35): which batch sizes to capture graphs at, chosen from measured
costs and a traffic mix. Pure: numpy and the standard library, no CUDA.

- `traffic`: the batch-size histogram (`Traffic`) and its loader (CSV or JSON);
- `costs`: a candidate bucket's measured or interpolated costs (`CostPoint`, `CostCurve`) and
  the budgets a bucket list must keep (`Budgets`);
- `evaluate`: the figures of any bucket list over a traffic mix (`Evaluation`), presets too;
- `optimise`: the list that minimises the expected time per step under the budgets (`Plan`);
- `engines`: a list written the way serving engines take it.
"""
