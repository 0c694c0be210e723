CREATE TABLE htable2$family2 LIKE htable1$family1;
