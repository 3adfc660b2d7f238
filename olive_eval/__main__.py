import sys

from olive_eval.cli import main

sys.exit(main())
