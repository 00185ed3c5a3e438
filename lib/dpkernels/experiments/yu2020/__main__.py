"""``python -m dpkernels.experiments.yu2020 [--profile scale] [--out DIR] [--jobs N]``: the runs of the registered
hypotheses whose variants rerun the protocol (:func:`dpkernels.experiments.yu2020.variants.main`)."""

from dpkernels.experiments.yu2020.variants import main

raise SystemExit(main())
