"""``python -m dpkernels.experiments.chaudhuri2011 [--out DIR] [--jobs N] [--only PART ...]``: the runs of the
registered hypotheses that need protocol runs of their own (:func:`dpkernels.experiments.chaudhuri2011.variants.main`)."""

from dpkernels.experiments.chaudhuri2011.variants import main

raise SystemExit(main())
