"""Object-detection kernels: flat inputs, box and mask IoU, COCO (pycocotools-exact) and Valor conventions."""
